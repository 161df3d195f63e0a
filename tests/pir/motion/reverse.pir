; inferred IR of tests/ui/run/split_barrier.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/run/split_barrier.prism --stage inferred)
kernel @reverse(%0, %1) entry grid[1] facts 1 1 smem 256 {
  reg %0: ptr "x"
  reg %1: ptr "out"
  reg %2: i32 "b"
  reg %3: i32
  reg %4: ptr "tile"
  reg %5: i32 "t"
  reg %6: i32
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
  mem #0 param "x" grid[1] i32
  mem #1 param "out" grid[1] i32
  mem #2 partition "out_b" block[1] i32 of #1
  mem #3 shared "tile" block[1] i32
  mem #4 partition "mine" thread[1] i32 of #3
  mem #5 partition "o" thread[1] i32 of #2
  access !0 read #0
  access !1 write #4 index %7
  access !2 read #3
  access !3 read #0
  access !4 write #5 index %13
  body {
    %3 = relid block[1] in grid[1]
    %2 = copy %3
    scope partition #1 -> #2 {
      group block[1] {
        %4 = shared 0 256 i32
        %6 = relid thread[1] in block[1]
        %5 = copy %6
        scope partition #3 -> #4 {
          group thread[1] {
            %7 = const 0
            %8 = add %5, %7
            %9 = const 64
            %10 = mul %2, %9
            %11 = add %10, %5
            %12 = load %0[%11] !0
            store %4[%8], %12 !1
          }
        }
        barrier block[1] inferred #3
        scope partition #2 -> #5 {
          group thread[1] {
            %13 = const 0
            %14 = add %5, %13
            %15 = const 64
            %16 = mul %2, %15
            %17 = add %16, %14
            %18 = const 63
            %19 = sub %18, %5
            %20 = load %4[%19] !2
            %21 = load %0[%5] !3
            %22 = add %20, %21
            store %1[%17], %22 !4
          }
        }
      }
    }
  }
}
