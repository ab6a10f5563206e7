define i32 @sq(i32 %x) {
entry:
  %p = alloca i32
  store i32 %x, ptr %p
  %v = load i32, ptr %p
  %r = mul i32 %v, %v
  ret i32 %r
}
