; lowered IR of tests/ui/accept/rules/async-misuse.prism
; (made with: cargo run -p prism_sync --example sync_ir -- tests/ui/accept/rules/async-misuse.prism --stage lowered)
kernel @staged(%0, %1) entry grid[1] facts 32 1 smem 64 {
  reg %0: ptr "src"
  reg %1: ptr "out"
  reg %2: i32 "g"
  reg %3: i32
  reg %4: ptr "smem"
  reg %5: i32
  reg %6: i32
  reg %7: i32
  reg %8: i32
  reg %9: i32
  reg %10: i32
  reg %11: i32
  reg %12: i32
  reg %13: i32
  reg %14: i32 "t"
  reg %15: i32
  reg %16: i32
  reg %17: i32
  reg %18: i32
  reg %19: i32
  reg %20: f32
  mem #0 param "src" grid[1] f32
  mem #1 param "out" grid[1] f32
  mem #2 partition "mine" thread[1] f32 of #1
  mem #3 shared "smem" block[1] f32
  mem #4 async "pending" block[1] f32 of #3
  access !0 async #4
  access !1 read #0
  access !2 async #4
  access !3 read #0
  access !4 async #4
  access !5 read #0
  access !6 read #3
  access !7 write #2 index %16
  body {
    %3 = relid thread[1] in grid[1]
    %2 = copy %3
    scope partition #1 -> #2 {
      group block[1] {
        %4 = shared 0 64 f32
        scope async #3 -> #4 {
          split thread[1] {
            case 0 1 thread[1] {
              %5 = const 0
              %6 = const 0
              %7 = const 16
              intrinsic cp_async(%4[%5], %0[%6], %7) !0 !1
              %8 = const 4
              %9 = const 4
              %10 = const 8
              intrinsic cp_async(%4[%8], %0[%9], %10) !2 !3
              %11 = const 8
              %12 = const 8
              %13 = const 4
              intrinsic cp_async(%4[%11], %0[%12], %13) !4 !5
            }
          }
          asynccommit
        }
        %15 = relid thread[1] in block[1]
        %14 = copy %15
        asyncwait 0 #4
        group thread[1] {
          %16 = const 0
          %17 = add %2, %16
          %18 = const 16
          %19 = rem %14, %18
          %20 = load %4[%19] !6
          store %1[%17], %20 !7
        }
      }
    }
  }
}
