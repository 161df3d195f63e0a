; lowered IR of tests/ui/accept/review/straddling_units.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/accept/review/straddling_units.prism --stage lowered)
kernel @halves(%0) entry grid[1] facts 48 1 smem 384 {
  reg %0: ptr "out"
  reg %1: i32 "b"
  reg %2: i32
  reg %3: ptr "tile"
  reg %4: i32 "h"
  reg %5: i32
  reg %6: i32 "t"
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: i32
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32
  reg %19: i32
  reg %20: i32
  reg %21: i32
  reg %22: i32
  reg %23: i32
  reg %24: i32
  reg %25: i32
  reg %26: i32
  reg %27: i32
  reg %28: i32
  reg %29: i32
  mem #0 param "out" grid[1] i32
  mem #1 partition "out_b" block[1] i32 of #0
  mem #2 shared "tile" block[1] i32
  mem #3 partition "half" thread[48] i32 of #2
  mem #4 partition "out_h" thread[48] i32 of #1
  mem #5 partition "mine" thread[1] i32 of #3
  mem #6 partition "o" thread[1] i32 of #4
  access !0 write #5 index %8
  access !1 read #3 index %25
  access !2 write #6 index %16
  body {
    %2 = relid block[1] in grid[1]
    %1 = copy %2
    scope partition #0 -> #1 {
      group block[1] {
        %3 = shared 0 384 i32
        %5 = relid thread[48] in block[1]
        %4 = copy %5
        scope partition #2 -> #3 {
          scope partition #1 -> #4 {
            group thread[48] {
              %7 = relid thread[1] in thread[48]
              %6 = copy %7
              scope partition #3 -> #5 {
                group thread[1] {
                  %8 = const 0
                  %9 = add %6, %8
                  %10 = const 48
                  %11 = mul %4, %10
                  %12 = add %11, %9
                  %13 = const 10
                  %14 = mul %6, %13
                  %15 = add %14, %4
                  store %3[%12], %15 !0
                }
              }
              scope partition #4 -> #6 {
                group thread[1] {
                  %16 = const 0
                  %17 = add %6, %16
                  %18 = const 48
                  %19 = mul %4, %18
                  %20 = add %19, %17
                  %21 = const 96
                  %22 = mul %1, %21
                  %23 = add %22, %20
                  %24 = const 47
                  %25 = sub %24, %6
                  %26 = const 48
                  %27 = mul %4, %26
                  %28 = add %27, %25
                  %29 = load %3[%28] !1
                  store %0[%23], %29 !2
                }
              }
            }
          }
        }
      }
    }
  }
}
