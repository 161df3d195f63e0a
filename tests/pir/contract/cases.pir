; lowered IR of the contraction cases below, made with
; cargo run -p prism_sync --example sync_ir -- contract_cases.prism --stage lowered
; then edited by hand: `r8` adds the product register directly, with its operand %32
; overwritten in between, and the product of `r1` lands in a register named like a source
; variable (no source program does either; a later pass might). Neither may fuse.
; # Floating-point contraction: which products fuse into the addition they feed.
; @prism("device")
; @requires(thread[1])
; def cases(a : float, b : float, c : float, d : double, e : double, h : half, k : int, flag : bool) -> float:
;     # Fuse: m + c, c + m, m - c, c - m, and the left product of two.
;     r1 : float = a * b + c
;     r2 : float = c + a * b
;     r3 : float = a * b - c
;     r4 : float = c - a * b
;     r5 : float = a * b + b * c
;     # Fuse: double.
;     r6 : double = d * e + e
;     # No fusion: the product is used twice.
;     p : float = a * b
;     r7 : float = p + c + p
;     # No fusion: an operand changes between the product and the addition.
;     x : float = a
;     q : float = x * b
;     x = c
;     r8 : float = q + x
;     # No fusion: the product is computed in a branch, the addition after it.
;     s : float = 0.0
;     if flag:
;         s = a * b
;     r9 : float = s + c
;     # No fusion: integers and half precision.
;     n : int = k * k + k
;     g : half = h * h + h
;     return r1 + r2 + r3 + r4 + r5 + float(r6) + r7 + r8 + r9 + float(n) + float(g)
device @cases(%0, %1, %2, %3, %4, %5, %6, %7) entry thread[1] facts 1 1 smem 0 -> f32 {
  reg %0: f32 "a"
  reg %1: f32 "b"
  reg %2: f32 "c"
  reg %3: f64 "d"
  reg %4: f64 "e"
  reg %5: f16 "h"
  reg %6: i32 "k"
  reg %7: bool "flag"
  reg %8: f32 "r1"
  reg %9: f32 "named"
  reg %10: f32
  reg %11: f32 "r2"
  reg %12: f32
  reg %13: f32
  reg %14: f32 "r3"
  reg %15: f32
  reg %16: f32
  reg %17: f32 "r4"
  reg %18: f32
  reg %19: f32
  reg %20: f32 "r5"
  reg %21: f32
  reg %22: f32
  reg %23: f32
  reg %24: f64 "r6"
  reg %25: f64
  reg %26: f64
  reg %27: f32 "p"
  reg %28: f32
  reg %29: f32 "r7"
  reg %30: f32
  reg %31: f32
  reg %32: f32 "x"
  reg %33: f32 "q"
  reg %34: f32
  reg %35: f32 "r8"
  reg %36: f32
  reg %37: f32 "s"
  reg %38: f32
  reg %39: f32
  reg %40: f32 "r9"
  reg %41: f32
  reg %42: i32 "n"
  reg %43: i32
  reg %44: i32
  reg %45: f16 "g"
  reg %46: f16
  reg %47: f16
  reg %48: f32
  reg %49: f32
  reg %50: f32
  reg %51: f32
  reg %52: f32
  reg %53: f32
  reg %54: f32
  reg %55: f32
  reg %56: f32
  reg %57: f32
  reg %58: f32
  reg %59: f32
  reg %60: f32
  body {
    %9 = mul %0, %1
    %10 = add %9, %2
    %8 = copy %10
    %12 = mul %0, %1
    %13 = add %2, %12
    %11 = copy %13
    %15 = mul %0, %1
    %16 = sub %15, %2
    %14 = copy %16
    %18 = mul %0, %1
    %19 = sub %2, %18
    %17 = copy %19
    %21 = mul %0, %1
    %22 = mul %1, %2
    %23 = add %21, %22
    %20 = copy %23
    %25 = mul %3, %4
    %26 = add %25, %4
    %24 = copy %26
    %28 = mul %0, %1
    %27 = copy %28
    %30 = add %27, %2
    %31 = add %30, %27
    %29 = copy %31
    %32 = copy %0
    %34 = mul %32, %1
    %32 = copy %2
    %36 = add %34, %32
    %35 = copy %36
    %38 = const 0.0
    %37 = copy %38
    if %7 {
      %39 = mul %0, %1
      %37 = copy %39
    }
    %41 = add %37, %2
    %40 = copy %41
    %43 = mul %6, %6
    %44 = add %43, %6
    %42 = copy %44
    %46 = mul %5, %5
    %47 = add %46, %5
    %45 = copy %47
    %48 = add %8, %11
    %49 = add %48, %14
    %50 = add %49, %17
    %51 = add %50, %20
    %52 = intrinsic float(%24)
    %53 = add %51, %52
    %54 = add %53, %29
    %55 = add %54, %35
    %56 = add %55, %40
    %57 = intrinsic float(%42)
    %58 = add %56, %57
    %59 = intrinsic float(%45)
    %60 = add %58, %59
    return %60
  }
}
