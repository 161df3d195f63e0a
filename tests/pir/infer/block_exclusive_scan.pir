; lowered IR of tests/ui/run/inferred/block_exclusive_scan_inferred.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/run/inferred/block_exclusive_scan_inferred.prism --stage lowered)
device @warp_inclusive_scan(%0) entry thread[32] facts 32 1 smem 0 -> i32 {
  reg %0: i32 "v"
  reg %1: i32 "lane"
  reg %2: i32
  reg %3: i32 "acc"
  reg %4: i32 "k"
  reg %5: i32
  reg %6: i32
  reg %7: i32
  reg %8: bool
  reg %9: i32 "up"
  reg %10: i32
  reg %11: i32
  reg %12: u32
  reg %13: i32
  reg %14: i32
  reg %15: i32
  reg %16: bool
  body {
    %2 = relid thread[1] in thread[32]
    %1 = copy %2
    %3 = copy %0
    %5 = const 0
    %4 = copy %5
    %6 = const 5
    %7 = const 1
    loop {
      %8 = lt %4, %6
    } while %8 {
      %10 = const 1
      %11 = shl %10, %4
      %12 = cast %11
      %13 = intrinsic shfl_up(%3, %12)
      %9 = copy %13
      group thread[1] {
        %14 = const 1
        %15 = shl %14, %4
        %16 = ge %1, %15
        if %16 {
          %3 = add %3, %9
        }
      }
    } latch {
      %4 = add %4, %7
    }
    return %3
  }
}

device @block_exclusive_scan(%0) entry block[1] facts 32 1 smem 128 -> i32 {
  reg %0: i32 "v"
  reg %1: ptr "warp_tot"
  reg %2: i32 "t"
  reg %3: i32
  reg %4: i32 "w"
  reg %5: i32
  reg %6: i32 "lane"
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32 "incl"
  reg %13: i32
  reg %14: i32
  reg %15: bool
  reg %16: i32
  reg %17: i32
  reg %18: i32 "tot"
  reg %19: i32
  reg %20: i32
  reg %21: i32
  reg %22: i32
  reg %23: i32 "s"
  reg %24: i32
  reg %25: i32
  reg %26: i32
  reg %27: i32
  reg %28: i32 "result"
  reg %29: i32
  reg %30: i32
  reg %31: i32
  mem #0 shared "warp_tot" block[1] i32
  mem #1 partition "zero_t" thread[1] i32 of #0
  mem #2 partition "tot_t" thread[1] i32 of #0
  mem #3 partition "off_t" thread[1] i32 of #0
  access !0 write #1 index %9
  access !1 write #2 index %16
  access !2 read #3 index %20
  access !3 write #3 index %25
  access !4 read #0
  body {
    %1 = shared 0 128 i32
    %3 = relid thread[1] in block[1]
    %2 = copy %3
    %5 = relid thread[32] in block[1]
    %4 = copy %5
    %7 = const 32
    %8 = rem %2, %7
    %6 = copy %8
    scope partition #0 -> #1 {
      split thread[32] {
        case 0 1 thread[32] {
          group thread[1] {
            %9 = const 0
            %10 = add %6, %9
            %11 = const 0
            store %1[%10], %11 !0
          }
        }
      }
    }
    %13 = call @warp_inclusive_scan(%0) smem 128
    %12 = copy %13
    scope partition #0 -> #2 {
      group thread[1] {
        %14 = const 31
        %15 = eq %6, %14
        if %15 {
          %16 = const 0
          %17 = add %4, %16
          store %1[%17], %12 !1
        }
      }
    }
    scope partition #0 -> #3 {
      split thread[32] {
        case 0 1 thread[32] {
          %19 = const 0
          %18 = copy %19
          group thread[1] {
            %20 = const 0
            %21 = add %6, %20
            %22 = load %1[%21] !2
            %18 = copy %22
          }
          %24 = call @warp_inclusive_scan(%18) smem 128
          %23 = copy %24
          group thread[1] {
            %25 = const 0
            %26 = add %6, %25
            %27 = sub %23, %18
            store %1[%26], %27 !3
          }
        }
      }
    }
    %29 = load %1[%4] !4
    %30 = add %29, %12
    %31 = sub %30, %0
    %28 = copy %31
    return %28
  }
}

kernel @tile_exclusive_scan(%0, %1, %2, %3) entry grid[1] facts 32 1 smem 128 launch_bounds 256 {
  reg %0: i32 "n"
  reg %1: ptr "x"
  reg %2: ptr "out"
  reg %3: ptr "totals"
  reg %4: i32 "b"
  reg %5: i32
  reg %6: i32 "t"
  reg %7: i32
  reg %8: i32 "first"
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: i32 "k"
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: bool
  reg %19: i32
  reg %20: bool
  reg %21: i32
  reg %22: i32
  reg %23: i32 "thread_sum"
  reg %24: i32
  reg %25: i32 "k"
  reg %26: i32
  reg %27: i32
  reg %28: i32
  reg %29: bool
  reg %30: i32
  reg %31: i32 "prefix"
  reg %32: i32
  reg %33: i32 "running"
  reg %34: i32 "k"
  reg %35: i32
  reg %36: i32
  reg %37: i32
  reg %38: bool
  reg %39: i32
  reg %40: bool
  reg %41: i32
  reg %42: i32
  reg %43: i32
  reg %44: i32
  reg %45: i32
  reg %46: i32
  reg %47: i32
  reg %48: i32
  reg %49: bool
  reg %50: i32
  reg %51: i32
  reg %52: i32
  local $0: i32[4] "items"
  mem #0 param "x" grid[1] i32
  mem #1 param "out" grid[1] i32
  mem #2 param "totals" grid[1] i32
  mem #3 partition "out_b" block[1] i32 of #1
  mem #4 partition "total_b" block[1] i32 of #2
  mem #5 partition "out_t" thread[1] i32 of #3
  mem #6 partition "total_t" thread[1] i32 of #4
  access !0 read #0
  access !1 write #5 index %34
  access !2 write #6 index %50
  body {
    %5 = relid block[1] in grid[1]
    %4 = copy %5
    scope partition #1 -> #3 {
      scope partition #2 -> #4 {
        group block[1] {
          %7 = relid thread[1] in block[1]
          %6 = copy %7
          %9 = const 1024
          %10 = mul %4, %9
          %11 = const 4
          %12 = mul %6, %11
          %13 = add %10, %12
          %8 = copy %13
          decl $0
          group thread[1] {
            %15 = const 0
            %14 = copy %15
            %16 = const 4
            %17 = const 1
            loop {
              %18 = lt %14, %16
            } while %18 {
              %19 = add %8, %14
              %20 = lt %19, %0
              if %20 {
                %21 = add %8, %14
                %22 = load %1[%21] !0
                lstore $0[%14], %22
              }
            } latch {
              %14 = add %14, %17
            }
          }
          %24 = const 0
          %23 = copy %24
          group thread[1] {
            %26 = const 0
            %25 = copy %26
            %27 = const 4
            %28 = const 1
            loop {
              %29 = lt %25, %27
            } while %29 {
              %30 = lload $0[%25]
              %23 = add %23, %30
            } latch {
              %25 = add %25, %28
            }
          }
          %32 = call @block_exclusive_scan(%23) smem 0
          %31 = copy %32
          scope partition #3 -> #5 {
            group thread[1] {
              %33 = copy %31
              %35 = const 0
              %34 = copy %35
              %36 = const 4
              %37 = const 1
              loop {
                %38 = lt %34, %36
              } while %38 {
                %39 = add %8, %34
                %40 = lt %39, %0
                if %40 {
                  %41 = const 4
                  %42 = mul %6, %41
                  %43 = add %42, %34
                  %44 = const 1024
                  %45 = mul %4, %44
                  %46 = add %45, %43
                  store %2[%46], %33 !1
                }
                %47 = lload $0[%34]
                %33 = add %33, %47
              } latch {
                %34 = add %34, %37
              }
            }
          }
          scope partition #4 -> #6 {
            group thread[1] {
              %48 = const 255
              %49 = eq %6, %48
              if %49 {
                %50 = const 0
                %51 = add %4, %50
                %52 = add %31, %23
                store %3[%51], %52 !2
              }
            }
          }
        }
      }
    }
  }
}
