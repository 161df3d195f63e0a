; moved IR of tests/ui/accept/rules/corner_elif_chains.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/accept/rules/corner_elif_chains.prism --stage moved)
kernel @modes(%0, %1) entry grid[1] facts 32 1 smem 0 {
  reg %0: i32 "mode"
  reg %1: ptr "out"
  reg %2: i32 "g"
  reg %3: i32
  reg %4: i32
  reg %5: bool
  reg %6: i32
  reg %7: bool
  reg %8: i32
  reg %9: bool
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: bool
  reg %14: i32
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32
  reg %19: i32
  reg %20: bool
  reg %21: i32
  reg %22: i32
  reg %23: i32
  reg %24: i32
  reg %25: i32
  reg %26: i32
  reg %27: bool
  reg %28: i32
  reg %29: i32
  reg %30: i32
  reg %31: i32
  reg %32: i32
  reg %33: i32
  mem #0 param "out" grid[1] i32
  mem #1 partition "mine" thread[1] i32 of #0
  access !0 write #1 index %14
  access !1 write #1 index %21
  access !2 write #1 index %28
  access !3 write #1 index %31
  body {
    %3 = relid thread[1] in grid[1]
    %2 = copy %3
    scope partition #0 -> #1 {
      group block[1] {
        %4 = const 0
        %5 = eq %0, %4
        if %5 {
          barrier block[1] explicit
        } else {
          %6 = const 1
          %7 = eq %0, %6
          if %7 {
          } else {
            %8 = const 2
            %9 = eq %0, %8
            if %9 {
              barrier block[1] explicit
              barrier block[1] explicit
            }
          }
        }
        group thread[1] {
          %10 = const 4
          %11 = rem %2, %10
          %12 = const 0
          %13 = eq %11, %12
          if %13 {
            %14 = const 0
            %15 = add %2, %14
            %16 = const 0
            store %1[%15], %16 !0
          } else {
            %17 = const 4
            %18 = rem %2, %17
            %19 = const 1
            %20 = eq %18, %19
            if %20 {
              %21 = const 0
              %22 = add %2, %21
              %23 = const 1
              store %1[%22], %23 !1
            } else {
              %24 = const 4
              %25 = rem %2, %24
              %26 = const 2
              %27 = eq %25, %26
              if %27 {
                %28 = const 0
                %29 = add %2, %28
                %30 = const 2
                store %1[%29], %30 !2
              } else {
                %31 = const 0
                %32 = add %2, %31
                %33 = const 3
                store %1[%32], %33 !3
              }
            }
          }
        }
      }
    }
  }
}
