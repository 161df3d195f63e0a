; moved IR of tests/ui/run/inferred/sgemm_smem_inferred.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/run/inferred/sgemm_smem_inferred.prism --stage moved)
kernel @sgemm_smem(%0, %1, %2, %3, %4, %5, %6, %7) entry grid[1] facts 32 1 smem 8192 launch_bounds 1024 {
  reg %0: i32 "M"
  reg %1: i32 "N"
  reg %2: i32 "K"
  reg %3: f32 "alpha"
  reg %4: ptr "A"
  reg %5: ptr "B"
  reg %6: f32 "beta"
  reg %7: ptr "C"
  reg %8: i32 "tiles_n"
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: i32
  reg %15: i32 "b"
  reg %16: i32
  reg %17: i32 "tile_row"
  reg %18: i32
  reg %19: i32
  reg %20: i32
  reg %21: i32 "tile_col"
  reg %22: i32
  reg %23: i32
  reg %24: i32
  reg %25: ptr "As"
  reg %26: ptr "Bs"
  reg %27: i32 "t"
  reg %28: i32
  reg %29: i32 "r"
  reg %30: i32
  reg %31: i32
  reg %32: i32 "c"
  reg %33: i32
  reg %34: i32
  reg %35: f32 "acc"
  reg %36: f32
  reg %37: i32 "k0"
  reg %38: i32
  reg %39: i32
  reg %40: bool
  reg %41: i32 "a_row"
  reg %42: i32
  reg %43: i32 "a_col"
  reg %44: i32
  reg %45: bool
  reg %46: bool
  reg %47: bool
  reg %48: i32
  reg %49: i32
  reg %50: i32
  reg %51: i32
  reg %52: f32
  reg %53: i32
  reg %54: i32
  reg %55: f32
  reg %56: i32 "b_row"
  reg %57: i32
  reg %58: i32 "b_col"
  reg %59: i32
  reg %60: bool
  reg %61: bool
  reg %62: bool
  reg %63: i32
  reg %64: i32
  reg %65: i32
  reg %66: i32
  reg %67: f32
  reg %68: i32
  reg %69: i32
  reg %70: f32
  reg %71: i32 "kk"
  reg %72: i32
  reg %73: i32
  reg %74: i32
  reg %75: bool
  reg %76: i32
  reg %77: i32
  reg %78: i32
  reg %79: f32
  reg %80: i32
  reg %81: i32
  reg %82: i32
  reg %83: f32
  reg %84: f32
  reg %85: bool
  reg %86: i32
  reg %87: bool
  reg %88: i32
  reg %89: bool
  reg %90: i32
  reg %91: i32
  reg %92: i32
  reg %93: i32
  reg %94: i32
  reg %95: i32
  reg %96: i32
  reg %97: f32
  reg %98: i32
  reg %99: i32
  reg %100: i32
  reg %101: i32
  reg %102: i32
  reg %103: i32
  reg %104: i32
  reg %105: f32
  reg %106: f32
  reg %107: f32
  mem #0 param "A" grid[1] f32
  mem #1 param "B" grid[1] f32
  mem #2 param "C" grid[1] f32
  mem #3 partition "C_blk" block[1] f32 of #2
  mem #4 shared "As" block[1] f32
  mem #5 shared "Bs" block[1] f32
  mem #6 partition "As_t" thread[1] f32 of #4
  mem #7 partition "Bs_t" thread[1] f32 of #5
  mem #8 partition "C_t" thread[1] f32 of #3
  access !0 read #0
  access !1 write #6 index %48
  access !2 write #6 index %53
  access !3 read #1
  access !4 write #7 index %63
  access !5 write #7 index %68
  access !6 read #4
  access !7 read #5
  access !8 read #8 index %98
  access !9 write #8 index %90
  body {
    %9 = const 32
    %10 = add %1, %9
    %11 = const 1
    %12 = sub %10, %11
    %13 = const 32
    %14 = div %12, %13
    %8 = copy %14
    %16 = relid block[1] in grid[1]
    %15 = copy %16
    %18 = div %15, %8
    %19 = const 32
    %20 = mul %18, %19
    %17 = copy %20
    %22 = rem %15, %8
    %23 = const 32
    %24 = mul %22, %23
    %21 = copy %24
    scope partition #2 -> #3 {
      group block[1] {
        %25 = shared 0 4096 f32
        %26 = shared 4096 4096 f32
        %28 = relid thread[1] in block[1]
        %27 = copy %28
        %30 = const 32
        %31 = div %27, %30
        %29 = copy %31
        %33 = const 32
        %34 = rem %27, %33
        %32 = copy %34
        %36 = const 0.0
        %35 = copy %36
        %38 = const 0
        %37 = copy %38
        %39 = const 32
        loop {
          %40 = lt %37, %2
        } while %40 {
          arrive block[1] s0 inferred #4
          scope partition #4 -> #6 {
            scope partition #5 -> #7 {
              group thread[1] {
                %42 = add %17, %29
                %41 = copy %42
                %44 = add %37, %32
                %43 = copy %44
                %46 = lt %41, %0
                %45 = copy %46
                if.any %45 {
                  %47 = lt %43, %2
                  %45 = copy %47
                }
                wait block[1] s0
                if %45 {
                  %48 = const 0
                  %49 = add %27, %48
                  %50 = mul %41, %2
                  %51 = add %50, %43
                  %52 = load %4[%51] !0
                  store %25[%49], %52 !1
                } else {
                  %53 = const 0
                  %54 = add %27, %53
                  %55 = const 0.0
                  store %25[%54], %55 !2
                }
                %57 = add %37, %29
                %56 = copy %57
                %59 = add %21, %32
                %58 = copy %59
                %61 = lt %56, %2
                %60 = copy %61
                if.any %60 {
                  %62 = lt %58, %1
                  %60 = copy %62
                }
                if %60 {
                  %63 = const 0
                  %64 = add %27, %63
                  %65 = mul %56, %1
                  %66 = add %65, %58
                  %67 = load %5[%66] !3
                  store %26[%64], %67 !4
                } else {
                  %68 = const 0
                  %69 = add %27, %68
                  %70 = const 0.0
                  store %26[%69], %70 !5
                }
              }
            }
          }
          barrier block[1] inferred #4
          group thread[1] {
            %72 = const 0
            %71 = copy %72
            %73 = const 32
            %74 = const 1
            loop {
              %75 = lt %71, %73
            } while %75 {
              %76 = const 32
              %77 = mul %29, %76
              %78 = add %77, %71
              %79 = load %25[%78] !6
              %80 = const 32
              %81 = mul %71, %80
              %82 = add %81, %32
              %83 = load %26[%82] !7
              %84 = mul %79, %83
              %35 = add %35, %84
            } latch {
              %71 = add %71, %74
            }
          }
        } latch {
          %37 = add %37, %39
        }
        scope partition #3 -> #8 {
          group thread[1] {
            %86 = add %17, %29
            %87 = lt %86, %0
            %85 = copy %87
            if.any %85 {
              %88 = add %21, %32
              %89 = lt %88, %1
              %85 = copy %89
            }
            if %85 {
              %90 = const 0
              %91 = mul %29, %1
              %92 = add %91, %32
              %93 = add %92, %90
              %94 = mul %17, %1
              %95 = add %94, %21
              %96 = add %95, %93
              %97 = mul %3, %35
              %98 = const 0
              %99 = mul %29, %1
              %100 = add %99, %32
              %101 = add %100, %98
              %102 = mul %17, %1
              %103 = add %102, %21
              %104 = add %103, %101
              %105 = load %7[%104] !8
              %106 = mul %6, %105
              %107 = add %97, %106
              store %7[%96], %107 !9
            }
          }
        }
      }
    }
  }
}
