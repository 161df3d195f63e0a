; inferred IR of tests/ui/run/inferred/layernorm_rows_inferred.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/run/inferred/layernorm_rows_inferred.prism --stage inferred)
device @warp_allreduce_sum(%0) entry thread[32] facts 32 1 smem 0 -> f32 {
  reg %0: f32 "v"
  reg %1: f32 "acc"
  reg %2: i32 "k"
  reg %3: i32
  reg %4: i32
  reg %5: i32
  reg %6: bool
  reg %7: i32
  reg %8: i32
  reg %9: f32
  reg %10: i32
  reg %11: f32
  body {
    %1 = copy %0
    %3 = const 0
    %2 = copy %3
    %4 = const 5
    %5 = const 1
    loop {
      %6 = lt %2, %4
    } while %6 {
      %7 = const 1
      %8 = shl %7, %2
      %9 = intrinsic shfl_xor(%1, %8)
      %1 = add %1, %9
    } latch {
      %2 = add %2, %5
    }
    %10 = const 0
    %11 = intrinsic shfl(%1, %10)
    return %11
  }
}

device @block_sum(%0) entry block[1] facts 32 1 smem 128 -> f32 {
  reg %0: f32 "v"
  reg %1: ptr "warp_sums"
  reg %2: i32 "t"
  reg %3: i32
  reg %4: i32 "w"
  reg %5: i32
  reg %6: i32
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: f32
  reg %11: f32 "ws"
  reg %12: f32
  reg %13: i32
  reg %14: i32
  reg %15: f32 "total"
  reg %16: f32
  reg %17: i32 "i"
  reg %18: i32
  reg %19: i32
  reg %20: i32
  reg %21: bool
  reg %22: f32
  mem #0 shared "warp_sums" block[1] f32
  mem #1 partition "zero_t" thread[1] f32 of #0
  mem #2 partition "slot_t" thread[1] f32 of #0
  access !0 write #1 index %6
  access !1 write #2 index %13
  access !2 read #0
  body {
    %1 = shared 0 128 f32
    %3 = relid thread[1] in block[1]
    %2 = copy %3
    %5 = relid thread[32] in block[1]
    %4 = copy %5
    scope partition #0 -> #1 {
      split thread[32] {
        case 0 1 thread[32] {
          group thread[1] {
            %6 = const 0
            %7 = const 32
            %8 = rem %2, %7
            %9 = add %8, %6
            %10 = const 0.0
            store %1[%9], %10 !0
          }
        }
      }
    }
    %12 = call @warp_allreduce_sum(%0) smem 128
    %11 = copy %12
    barrier block[1] inferred #0
    scope partition #0 -> #2 {
      group thread[32] {
        split thread[1] {
          case 0 1 thread[1] {
            %13 = const 0
            %14 = add %4, %13
            store %1[%14], %11 !1
          }
        }
      }
    }
    %16 = const 0.0
    %15 = copy %16
    %18 = const 0
    %17 = copy %18
    %19 = const 32
    %20 = const 1
    barrier block[1] inferred #0
    loop {
      %21 = lt %17, %19
    } while %21 {
      %22 = load %1[%17] !2
      %15 = add %15, %22
    } latch {
      %17 = add %17, %20
    }
    return %15
  }
}

kernel @layernorm_rows(%0, %1, %2, %3, %4, %5, %6) entry grid[1] facts 32 1 smem 128 launch_bounds 1024 {
  reg %0: i32 "rows"
  reg %1: i32 "cols"
  reg %2: f32 "eps"
  reg %3: ptr "x"
  reg %4: ptr "gamma"
  reg %5: ptr "beta"
  reg %6: ptr "y"
  reg %7: i32 "threads"
  reg %8: i32
  reg %9: i32
  reg %10: i32 "r"
  reg %11: i32
  reg %12: i32 "t"
  reg %13: i32
  reg %14: f32 "s"
  reg %15: f32
  reg %16: i32 "c"
  reg %17: bool
  reg %18: i32
  reg %19: bool
  reg %20: bool
  reg %21: bool
  reg %22: i32
  reg %23: i32
  reg %24: f32
  reg %25: f32 "mean"
  reg %26: f32
  reg %27: f32
  reg %28: f32
  reg %29: f32 "d2"
  reg %30: f32
  reg %31: i32 "c"
  reg %32: bool
  reg %33: i32
  reg %34: bool
  reg %35: bool
  reg %36: bool
  reg %37: f32 "d"
  reg %38: i32
  reg %39: i32
  reg %40: f32
  reg %41: f32
  reg %42: f32
  reg %43: f32 "var"
  reg %44: f32
  reg %45: f32
  reg %46: f32
  reg %47: f32 "inv_std"
  reg %48: f32
  reg %49: f32
  reg %50: f32
  reg %51: f32
  reg %52: i32 "c"
  reg %53: bool
  reg %54: i32
  reg %55: bool
  reg %56: bool
  reg %57: bool
  reg %58: i32
  reg %59: i32
  reg %60: i32
  reg %61: i32
  reg %62: f32
  reg %63: f32
  reg %64: f32
  reg %65: f32
  reg %66: f32
  reg %67: f32
  reg %68: f32
  mem #0 param "x" grid[1] f32
  mem #1 param "gamma" grid[1] f32
  mem #2 param "beta" grid[1] f32
  mem #3 param "y" grid[1] f32
  mem #4 partition "y_row" block[1] f32 of #3
  mem #5 partition "y_t" thread[1] f32 of #4
  mem #6 shared "@block_sum.smem" block[1] u32
  access !0 read #0
  access !1 read #0
  access !2 read #0
  access !3 read #1
  access !4 read #2
  access !5 write #5 index %52
  body {
    %8 = const 0
    %7 = copy %8
    unsafe {
      %9 = raw block_dim
      %7 = copy %9
    }
    assert.uniform %7 grid[1]
    %11 = relid block[1] in grid[1]
    %10 = copy %11
    scope partition #3 -> #4 {
      group block[1] {
        %13 = relid thread[1] in block[1]
        %12 = copy %13
        %15 = const 0.0
        %14 = copy %15
        group thread[1] {
          %16 = copy %12
          loop {
            %18 = const 0
            %19 = gt %7, %18
            %20 = lt %16, %1
            %21 = gt %16, %1
            %17 = select %19, %20, %21
          } while %17 {
            %22 = mul %10, %1
            %23 = add %22, %16
            %24 = load %3[%23] !0
            %14 = add %14, %24
          } latch {
            %16 = add %16, %7
          }
        }
        %26 = call @block_sum(%14) smem 0
        %27 = intrinsic float(%1)
        %28 = div %26, %27
        %25 = copy %28
        %30 = const 0.0
        %29 = copy %30
        group thread[1] {
          %31 = copy %12
          loop {
            %33 = const 0
            %34 = gt %7, %33
            %35 = lt %31, %1
            %36 = gt %31, %1
            %32 = select %34, %35, %36
          } while %32 {
            %38 = mul %10, %1
            %39 = add %38, %31
            %40 = load %3[%39] !1
            %41 = sub %40, %25
            %37 = copy %41
            %42 = mul %37, %37
            %29 = add %29, %42
          } latch {
            %31 = add %31, %7
          }
        }
        barrier block[1] inferred #6
        %44 = call @block_sum(%29) smem 0
        %45 = intrinsic float(%1)
        %46 = div %44, %45
        %43 = copy %46
        %48 = const 1.0
        %49 = add %43, %2
        %50 = intrinsic sqrt(%49)
        %51 = div %48, %50
        %47 = copy %51
        scope partition #4 -> #5 {
          group thread[1] {
            %52 = copy %12
            loop {
              %54 = const 0
              %55 = gt %7, %54
              %56 = lt %52, %1
              %57 = gt %52, %1
              %53 = select %55, %56, %57
            } while %53 {
              %58 = mul %10, %1
              %59 = add %58, %52
              %60 = mul %10, %1
              %61 = add %60, %52
              %62 = load %3[%61] !2
              %63 = sub %62, %25
              %64 = mul %63, %47
              %65 = load %4[%52] !3
              %66 = mul %64, %65
              %67 = load %5[%52] !4
              %68 = add %66, %67
              store %6[%59], %68 !5
            } latch {
              %52 = add %52, %7
            }
          }
        }
      }
    }
  }
}
