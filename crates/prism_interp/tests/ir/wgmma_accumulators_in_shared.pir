device @issue_into(%0, %1, %2) entry thread[128] facts 128 1 smem 0 {
  reg %0: ptr "acc"
  reg %1: ptr "a_s"
  reg %2: ptr "b_s"
  reg %3: i32
  reg %4: i32
  mem #0 param "acc" thread[1] f32
  mem #1 param "a_s" thread[128] f32
  mem #2 param "b_s" thread[128] f32
  access !0 write #0
  access !1 read #1
  access !2 read #2
  body {
    intrinsic wgmma_fence()
    %3 = const 8
    intrinsic wgmma_tf32(%0, %1, %2, %3) !0 !1 !2
    intrinsic wgmma_commit_group()
    %4 = const 0
    intrinsic wgmma_wait(%4)
  }
}

kernel @k(%0) entry grid[1] facts 128 1 smem 4352 {
  reg %0: ptr "out"
  reg %1: ptr "a_s"
  reg %2: ptr "b_s"
  reg %3: ptr "acc_s"
  reg %4: i32 "t"
  reg %5: i32
  reg %6: i32 "s"
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: bool
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: i32
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32
  reg %19: f32
  reg %20: i32
  reg %21: bool
  reg %22: i32
  reg %23: i32
  reg %24: i32
  reg %25: i32
  reg %26: f32
  reg %27: i32 "i"
  reg %28: i32
  reg %29: i32
  reg %30: i32
  reg %31: bool
  reg %32: i32
  reg %33: i32
  reg %34: i32
  reg %35: f32
  reg %36: i32
  reg %37: i32
  reg %38: i32
  reg %39: i32
  reg %40: ptr "acc_t"
  reg %41: i32
  reg %42: i32
  reg %43: i32
  reg %44: i32
  reg %45: i32
  reg %46: i32
  reg %47: f32
  reg %48: i32
  reg %49: i32
  reg %50: i32
  reg %51: i32
  reg %52: f32
  reg %53: f32
  reg %54: i32
  reg %55: i32
  reg %56: i32
  reg %57: i32
  reg %58: f32
  reg %59: f32
  reg %60: i32
  reg %61: i32
  reg %62: i32
  reg %63: i32
  reg %64: f32
  reg %65: f32
  mem #0 param "out" grid[1] f32
  mem #1 partition "out_b" block[1] f32 of #0
  mem #2 shared "a_s" block[1] f32
  mem #3 shared "b_s" block[1] f32
  mem #4 shared "acc_s" block[1] f32
  mem #5 partition "a_t" thread[1] f32 of #2
  mem #6 partition "b_t" thread[1] f32 of #3
  mem #7 partition "acc_t" thread[1] f32 of #4
  mem #8 partition "mine" thread[1] f32 of #1
  access !0 write #5 index %6
  access !1 write #6 index %22
  access !2 write #7 index %27
  access !3 write #7
  access !4 read #2
  access !5 read #3
  access !6 read #7 index %43
  access !7 read #7 index %48
  access !8 read #7 index %54
  access !9 read #7 index %60
  access !10 write #8 index %41
  body {
    scope partition #0 -> #1 {
      group block[1] {
        %1 = shared 0 2048 f32
        %2 = shared 2048 256 f32
        %3 = shared 2304 2048 f32
        %5 = relid thread[1] in block[1]
        %4 = copy %5
        scope partition #2 -> #5 {
          group thread[1] {
            %7 = const 0
            %6 = copy %7
            %8 = const 4
            %9 = const 1
            loop counter %6 {
              %10 = lt %6, %8
            } while %10 {
              %11 = const 128
              %12 = mul %11, %6
              %13 = add %4, %12
              %14 = const 128
              %15 = mul %14, %6
              %16 = add %4, %15
              %17 = const 5
              %18 = rem %16, %17
              %19 = intrinsic float(%18)
              store %1[%13], %19 !0
            } latch {
              %6 = add %6, %9
            }
          }
        }
        scope partition #3 -> #6 {
          group thread[1] {
            %20 = const 64
            %21 = lt %4, %20
            if %21 {
              %22 = const 0
              %23 = add %4, %22
              %24 = const 3
              %25 = rem %4, %24
              %26 = intrinsic float(%25)
              store %2[%23], %26 !1
            }
          }
        }
        barrier block[1] inferred #2
        scope partition #4 -> #7 {
          group thread[1] {
            %28 = const 0
            %27 = copy %28
            %29 = const 4
            %30 = const 1
            loop counter %27 {
              %31 = lt %27, %29
            } while %31 {
              %32 = const 4
              %33 = mul %32, %4
              %34 = add %33, %27
              %35 = const 0.0
              store %3[%34], %35 !2
            } latch {
              %27 = add %27, %30
            }
          }
          %36 = const 0
          %37 = const 4
          %38 = mul %37, %4
          %39 = add %38, %36
          %40 = ptradd %3, %39
          call @issue_into(%40, %1, %2) smem 4352 !3 !4 !5
          scope partition #1 -> #8 {
            group thread[1] {
              %41 = const 0
              %42 = add %4, %41
              %43 = const 0
              %44 = const 4
              %45 = mul %44, %4
              %46 = add %45, %43
              %47 = load %3[%46] !6
              %48 = const 1
              %49 = const 4
              %50 = mul %49, %4
              %51 = add %50, %48
              %52 = load %3[%51] !7
              %53 = add %47, %52
              %54 = const 2
              %55 = const 4
              %56 = mul %55, %4
              %57 = add %56, %54
              %58 = load %3[%57] !8
              %59 = add %53, %58
              %60 = const 3
              %61 = const 4
              %62 = mul %61, %4
              %63 = add %62, %60
              %64 = load %3[%63] !9
              %65 = add %59, %64
              store %0[%42], %65 !10
            }
          }
        }
      }
    }
  }
}
; barrier 0: @k block[1] (block) for `a_s` before line 26: line 18 (Write) -> line 30 (Read)
