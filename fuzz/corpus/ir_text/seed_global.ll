@g = global i32 5
define i32 @rd() {
  %v = load i32, ptr @g
  ret i32 %v
}
declare i32 @ext(i32)
