; lowered IR of tests/ui/accept/seeds/041_prism_fig6_mma_tf32_naive.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/accept/seeds/041_prism_fig6_mma_tf32_naive.prism --stage lowered)
device @simple_mma(%0, %1, %2, %3, %4) entry thread[32] facts 32 1 smem 0 {
  reg %0: ptr "a"
  reg %1: ptr "b"
  reg %2: ptr "c"
  reg %3: i32 "k"
  reg %4: i32 "n"
  reg %5: i32 "x"
  reg %6: i32
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: f32
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32
  reg %19: i32
  reg %20: i32
  reg %21: i32
  reg %22: i32
  reg %23: i32
  reg %24: f32
  reg %25: i32
  reg %26: i32
  reg %27: i32
  reg %28: i32
  reg %29: i32
  reg %30: i32
  reg %31: i32
  reg %32: i32
  reg %33: i32
  reg %34: f32
  reg %35: i32
  reg %36: i32
  reg %37: i32
  reg %38: i32
  reg %39: i32
  reg %40: i32
  reg %41: i32
  reg %42: i32
  reg %43: i32
  reg %44: i32
  reg %45: i32
  reg %46: f32
  reg %47: i32
  reg %48: i32
  reg %49: i32
  reg %50: i32
  reg %51: i32
  reg %52: i32
  reg %53: i32
  reg %54: f32
  reg %55: i32
  reg %56: i32
  reg %57: i32
  reg %58: i32
  reg %59: i32
  reg %60: i32
  reg %61: i32
  reg %62: i32
  reg %63: i32
  reg %64: f32
  reg %65: i32
  reg %66: i32
  reg %67: i32
  reg %68: i32
  reg %69: i32
  reg %70: i32
  reg %71: i32
  reg %72: i32
  reg %73: i32
  reg %74: f32
  reg %75: i32
  reg %76: i32
  reg %77: i32
  reg %78: i32
  reg %79: i32
  reg %80: i32
  reg %81: i32
  reg %82: i32
  reg %83: i32
  reg %84: i32
  reg %85: i32
  reg %86: f32
  reg %87: i32
  reg %88: i32
  reg %89: i32
  reg %90: i32
  reg %91: i32
  reg %92: i32
  reg %93: i32
  reg %94: i32
  reg %95: i32
  reg %96: i32
  reg %97: i32
  reg %98: f32
  reg %99: i32
  reg %100: i32
  reg %101: i32
  reg %102: i32
  reg %103: i32
  reg %104: i32
  reg %105: i32
  reg %106: i32
  reg %107: i32
  reg %108: i32
  reg %109: i32
  reg %110: i32
  reg %111: i32
  reg %112: f32
  reg %113: i32
  reg %114: f32
  reg %115: i32
  reg %116: f32
  reg %117: i32
  reg %118: f32
  reg %119: i32
  reg %120: f32
  reg %121: i32
  reg %122: f32
  reg %123: i32
  reg %124: f32
  reg %125: i32
  reg %126: f32
  reg %127: i32
  reg %128: f32
  reg %129: i32
  reg %130: f32
  reg %131: i32
  reg %132: f32
  reg %133: f32
  reg %134: f32
  reg %135: f32
  reg %136: f32
  reg %137: i32
  reg %138: i32
  reg %139: i32
  reg %140: i32
  reg %141: i32
  reg %142: i32
  reg %143: i32
  reg %144: i32
  reg %145: i32
  reg %146: i32
  reg %147: i32
  reg %148: i32
  reg %149: i32
  reg %150: i32
  reg %151: i32
  reg %152: i32
  reg %153: i32
  reg %154: f32
  reg %155: i32
  reg %156: i32
  reg %157: i32
  reg %158: i32
  reg %159: i32
  reg %160: i32
  reg %161: i32
  reg %162: i32
  reg %163: i32
  reg %164: i32
  reg %165: i32
  reg %166: i32
  reg %167: i32
  reg %168: f32
  reg %169: i32
  reg %170: i32
  reg %171: i32
  reg %172: i32
  reg %173: i32
  reg %174: i32
  reg %175: i32
  reg %176: i32
  reg %177: i32
  reg %178: i32
  reg %179: i32
  reg %180: i32
  reg %181: i32
  reg %182: f32
  reg %183: i32
  reg %184: i32
  reg %185: i32
  reg %186: i32
  reg %187: i32
  reg %188: i32
  reg %189: i32
  reg %190: i32
  reg %191: i32
  reg %192: i32
  reg %193: i32
  reg %194: i32
  reg %195: i32
  reg %196: f32
  local $0: f32[4] "A"
  local $1: f32[2] "B"
  local $2: f32[4] "C"
  mem #0 param "a" thread[32] f32
  mem #1 param "b" thread[32] f32
  mem #2 param "c" thread[32] f32
  mem #3 partition "c_thrd" thread[1] f32 of #2
  access !0 read #0
  access !1 read #0
  access !2 read #0
  access !3 read #0
  access !4 read #1
  access !5 read #1
  access !6 read #2
  access !7 read #2
  access !8 read #2
  access !9 read #2
  access !10 write #3
  access !11 write #3
  access !12 write #3
  access !13 write #3
  body {
    %6 = relid thread[1] in thread[32]
    %5 = copy %6
    group thread[32] {
      decl $0
      decl $1
      decl $2
      %7 = const 0
      %8 = const 4
      %9 = div %5, %8
      %10 = mul %9, %3
      %11 = const 4
      %12 = rem %5, %11
      %13 = add %10, %12
      %14 = load %0[%13] !0
      lstore $0[%7], %14
      %15 = const 1
      %16 = const 4
      %17 = div %5, %16
      %18 = const 8
      %19 = add %17, %18
      %20 = mul %19, %3
      %21 = const 4
      %22 = rem %5, %21
      %23 = add %20, %22
      %24 = load %0[%23] !1
      lstore $0[%15], %24
      %25 = const 2
      %26 = const 4
      %27 = div %5, %26
      %28 = mul %27, %3
      %29 = const 4
      %30 = rem %5, %29
      %31 = add %28, %30
      %32 = const 4
      %33 = add %31, %32
      %34 = load %0[%33] !2
      lstore $0[%25], %34
      %35 = const 3
      %36 = const 4
      %37 = div %5, %36
      %38 = const 8
      %39 = add %37, %38
      %40 = mul %39, %3
      %41 = const 4
      %42 = rem %5, %41
      %43 = add %40, %42
      %44 = const 4
      %45 = add %43, %44
      %46 = load %0[%45] !3
      lstore $0[%35], %46
      %47 = const 0
      %48 = const 4
      %49 = rem %5, %48
      %50 = mul %49, %4
      %51 = const 4
      %52 = div %5, %51
      %53 = add %50, %52
      %54 = load %1[%53] !4
      lstore $1[%47], %54
      %55 = const 1
      %56 = const 4
      %57 = rem %5, %56
      %58 = const 4
      %59 = add %57, %58
      %60 = mul %59, %4
      %61 = const 4
      %62 = div %5, %61
      %63 = add %60, %62
      %64 = load %1[%63] !5
      lstore $1[%55], %64
      %65 = const 0
      %66 = const 4
      %67 = div %5, %66
      %68 = mul %67, %4
      %69 = const 2
      %70 = const 4
      %71 = rem %5, %70
      %72 = mul %69, %71
      %73 = add %68, %72
      %74 = load %2[%73] !6
      lstore $2[%65], %74
      %75 = const 1
      %76 = const 4
      %77 = div %5, %76
      %78 = mul %77, %4
      %79 = const 2
      %80 = const 4
      %81 = rem %5, %80
      %82 = mul %79, %81
      %83 = add %78, %82
      %84 = const 1
      %85 = add %83, %84
      %86 = load %2[%85] !7
      lstore $2[%75], %86
      %87 = const 2
      %88 = const 4
      %89 = div %5, %88
      %90 = const 8
      %91 = add %89, %90
      %92 = mul %91, %4
      %93 = const 2
      %94 = const 4
      %95 = rem %5, %94
      %96 = mul %93, %95
      %97 = add %92, %96
      %98 = load %2[%97] !8
      lstore $2[%87], %98
      %99 = const 3
      %100 = const 4
      %101 = div %5, %100
      %102 = const 8
      %103 = add %101, %102
      %104 = mul %103, %4
      %105 = const 2
      %106 = const 4
      %107 = rem %5, %106
      %108 = mul %105, %107
      %109 = add %104, %108
      %110 = const 1
      %111 = add %109, %110
      %112 = load %2[%111] !9
      lstore $2[%99], %112
      %113 = const 0
      %114 = lload $0[%113]
      %115 = const 1
      %116 = lload $0[%115]
      %117 = const 2
      %118 = lload $0[%117]
      %119 = const 3
      %120 = lload $0[%119]
      %121 = const 0
      %122 = lload $1[%121]
      %123 = const 1
      %124 = lload $1[%123]
      %125 = const 0
      %126 = lload $2[%125]
      %127 = const 1
      %128 = lload $2[%127]
      %129 = const 2
      %130 = lload $2[%129]
      %131 = const 3
      %132 = lload $2[%131]
      %133, %134, %135, %136 = intrinsic intrinsic.mma(%114, %116, %118, %120, %122, %124, %126, %128, %130, %132)
      %137 = const 0
      lstore $2[%137], %133
      %138 = const 1
      lstore $2[%138], %134
      %139 = const 2
      lstore $2[%139], %135
      %140 = const 3
      lstore $2[%140], %136
      scope partition #2 -> #3 {
        group thread[1] {
          %141 = const 0
          %142 = const 0
          %143 = const 4
          %144 = div %5, %143
          %145 = add %144, %141
          %146 = mul %145, %4
          %147 = const 2
          %148 = const 4
          %149 = rem %5, %148
          %150 = mul %147, %149
          %151 = add %146, %150
          %152 = add %151, %142
          %153 = const 0
          %154 = lload $2[%153]
          store %2[%152], %154 !10
          %155 = const 0
          %156 = const 1
          %157 = const 4
          %158 = div %5, %157
          %159 = add %158, %155
          %160 = mul %159, %4
          %161 = const 2
          %162 = const 4
          %163 = rem %5, %162
          %164 = mul %161, %163
          %165 = add %160, %164
          %166 = add %165, %156
          %167 = const 1
          %168 = lload $2[%167]
          store %2[%166], %168 !11
          %169 = const 8
          %170 = const 0
          %171 = const 4
          %172 = div %5, %171
          %173 = add %172, %169
          %174 = mul %173, %4
          %175 = const 2
          %176 = const 4
          %177 = rem %5, %176
          %178 = mul %175, %177
          %179 = add %174, %178
          %180 = add %179, %170
          %181 = const 2
          %182 = lload $2[%181]
          store %2[%180], %182 !12
          %183 = const 8
          %184 = const 1
          %185 = const 4
          %186 = div %5, %185
          %187 = add %186, %183
          %188 = mul %187, %4
          %189 = const 2
          %190 = const 4
          %191 = rem %5, %190
          %192 = mul %189, %191
          %193 = add %188, %192
          %194 = add %193, %184
          %195 = const 3
          %196 = lload $2[%195]
          store %2[%194], %196 !13
        }
      }
    }
  }
}

kernel @mmaTF32NaiveKernel(%0, %1, %2, %3, %4, %5) entry grid[1] facts 32 1 smem 1280 {
  reg %0: ptr "A"
  reg %1: ptr "B"
  reg %2: ptr "C"
  reg %3: i32 "M"
  reg %4: i32 "N"
  reg %5: i32 "K"
  reg %6: i32 "num_blocks_n"
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32 "blk_row"
  reg %14: i32
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32 "blk_col"
  reg %19: i32
  reg %20: i32
  reg %21: i32
  reg %22: i32
  reg %23: ptr "A_smem"
  reg %24: ptr "B_smem"
  reg %25: ptr "C_smem"
  reg %26: i32 "i"
  reg %27: i32
  reg %28: i32
  reg %29: i32
  reg %30: bool
  reg %31: i32
  reg %32: i32
  reg %33: i32
  reg %34: i32
  reg %35: f32
  reg %36: i32 "kt"
  reg %37: i32
  reg %38: i32
  reg %39: i32
  reg %40: i32
  reg %41: bool
  reg %42: i32 "j"
  reg %43: i32
  reg %44: i32
  reg %45: i32
  reg %46: bool
  reg %47: i32 "flat_a"
  reg %48: i32
  reg %49: i32
  reg %50: i32
  reg %51: i32
  reg %52: i32 "row"
  reg %53: i32
  reg %54: i32
  reg %55: i32 "col"
  reg %56: i32
  reg %57: i32
  reg %58: i32 "global_row"
  reg %59: i32
  reg %60: i32 "global_col"
  reg %61: i32
  reg %62: i32
  reg %63: i32
  reg %64: i32
  reg %65: i32
  reg %66: i32
  reg %67: i32
  reg %68: f32
  reg %69: i32 "j"
  reg %70: i32
  reg %71: i32
  reg %72: i32
  reg %73: bool
  reg %74: i32 "flat_b"
  reg %75: i32
  reg %76: i32
  reg %77: i32
  reg %78: i32
  reg %79: i32 "global_row_b"
  reg %80: i32
  reg %81: i32
  reg %82: i32
  reg %83: i32
  reg %84: i32
  reg %85: i32 "global_col_b"
  reg %86: i32
  reg %87: i32
  reg %88: i32
  reg %89: i32
  reg %90: i32
  reg %91: i32
  reg %92: i32
  reg %93: f32
  reg %94: i32
  reg %95: i32
  reg %96: i32 "j"
  reg %97: i32
  reg %98: i32
  reg %99: i32
  reg %100: bool
  reg %101: i32 "flat_idx_c"
  reg %102: i32
  reg %103: i32
  reg %104: i32
  reg %105: i32
  reg %106: i32 "row_c"
  reg %107: i32
  reg %108: i32
  reg %109: i32 "col_c"
  reg %110: i32
  reg %111: i32
  reg %112: i32
  reg %113: i32
  reg %114: i32
  reg %115: i32
  reg %116: i32
  reg %117: i32
  reg %118: i32
  reg %119: i32
  reg %120: i32
  reg %121: i32
  reg %122: f32
  mem #0 param "A" grid[1] f32
  mem #1 param "B" grid[1] f32
  mem #2 param "C" grid[1] f32
  mem #3 partition "C_blk" block[1] f32 of #2
  mem #4 shared "A_smem" block[1] f32
  mem #5 shared "B_smem" block[1] f32
  mem #6 shared "C_smem" block[1] f32
  mem #7 partition "C_th" thread[1] f32 of #6
  mem #8 partition "A_th" thread[1] f32 of #4
  mem #9 partition "B_th" thread[1] f32 of #5
  mem #10 claim "Cs_warp" thread[32] f32 of #6
  mem #11 partition "C_th" thread[1] f32 of #3
  access !0 write #7 index %26
  access !1 read #0
  access !2 write #8 index %64
  access !3 read #1
  access !4 write #9 index %89
  access !5 read #4
  access !6 read #5
  access !7 write #10
  access !8 read #6
  access !9 write #11 index %112
  body {
    group grid[1] {
      %7 = const 8
      %8 = add %4, %7
      %9 = const 1
      %10 = sub %8, %9
      %11 = const 8
      %12 = div %10, %11
      %6 = copy %12
      %14 = relid block[1] in grid[1]
      %15 = div %14, %6
      %16 = const 16
      %17 = mul %15, %16
      %13 = copy %17
      %19 = relid block[1] in grid[1]
      %20 = rem %19, %6
      %21 = const 8
      %22 = mul %20, %21
      %18 = copy %22
      scope partition #2 -> #3 {
        group block[1] {
          %23 = shared 0 512 f32
          %24 = shared 512 256 f32
          %25 = shared 768 512 f32
          scope partition #6 -> #7 {
            %27 = const 0
            %26 = copy %27
            %28 = const 4
            %29 = const 1
            loop {
              %30 = lt %26, %28
            } while %30 {
              group thread[1] {
                %31 = relid thread[1] in block[1]
                %32 = const 4
                %33 = mul %31, %32
                %34 = add %33, %26
                %35 = const 0.0
                store %25[%34], %35 !0
              }
            } latch {
              %26 = add %26, %29
            }
          }
          %37 = const 0
          %36 = copy %37
          %38 = const 8
          %39 = div %5, %38
          %40 = const 1
          loop {
            %41 = lt %36, %39
          } while %41 {
            %43 = const 0
            %42 = copy %43
            %44 = const 4
            %45 = const 1
            loop {
              %46 = lt %42, %44
            } while %46 {
              %48 = relid thread[1] in block[1]
              %49 = const 4
              %50 = mul %48, %49
              %51 = add %50, %42
              %47 = copy %51
              %53 = const 8
              %54 = div %47, %53
              %52 = copy %54
              %56 = const 8
              %57 = rem %47, %56
              %55 = copy %57
              %59 = add %13, %52
              %58 = copy %59
              %61 = const 8
              %62 = mul %36, %61
              %63 = add %62, %55
              %60 = copy %63
              scope partition #4 -> #8 {
                group thread[1] {
                  %64 = const 0
                  %65 = add %47, %64
                  %66 = mul %58, %5
                  %67 = add %66, %60
                  %68 = load %0[%67] !1
                  store %23[%65], %68 !2
                }
              }
            } latch {
              %42 = add %42, %45
            }
            %70 = const 0
            %69 = copy %70
            %71 = const 2
            %72 = const 1
            loop {
              %73 = lt %69, %71
            } while %73 {
              %75 = relid thread[1] in block[1]
              %76 = const 2
              %77 = mul %75, %76
              %78 = add %77, %69
              %74 = copy %78
              %80 = const 8
              %81 = mul %36, %80
              %82 = const 8
              %83 = div %74, %82
              %84 = add %81, %83
              %79 = copy %84
              %86 = const 8
              %87 = rem %74, %86
              %88 = add %18, %87
              %85 = copy %88
              scope partition #5 -> #9 {
                group thread[1] {
                  %89 = const 0
                  %90 = add %74, %89
                  %91 = mul %79, %4
                  %92 = add %91, %85
                  %93 = load %1[%92] !3
                  store %24[%90], %93 !4
                }
              }
            } latch {
              %69 = add %69, %72
            }
            scope claim #6 -> #10 {
              split thread[1] {
                case 0 32 thread[32] {
                  %94 = const 8
                  %95 = const 8
                  call @simple_mma(%23, %24, %25, %94, %95) smem 1280 !5 !6 !7
                }
              }
            }
          } latch {
            %36 = add %36, %40
          }
          %97 = const 0
          %96 = copy %97
          %98 = const 4
          %99 = const 1
          loop {
            %100 = lt %96, %98
          } while %100 {
            %102 = relid thread[1] in block[1]
            %103 = const 4
            %104 = mul %102, %103
            %105 = add %104, %96
            %101 = copy %105
            %107 = const 8
            %108 = div %101, %107
            %106 = copy %108
            %110 = const 8
            %111 = rem %101, %110
            %109 = copy %111
            scope partition #3 -> #11 {
              group thread[1] {
                %112 = const 0
                %113 = mul %106, %4
                %114 = add %113, %109
                %115 = add %114, %112
                %116 = mul %13, %4
                %117 = add %116, %18
                %118 = add %117, %115
                %119 = const 8
                %120 = mul %106, %119
                %121 = add %120, %109
                %122 = load %25[%121] !8
                store %2[%118], %122 !9
              }
            }
          } latch {
            %96 = add %96, %99
          }
        }
      }
    }
    return
  }
}
