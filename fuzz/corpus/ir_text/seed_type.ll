define i32 @g(i64 %x) {
  ret i64 %x
}
