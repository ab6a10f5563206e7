; A module that parses but does not verify: %z is used before it is defined.
define i32 @f(i32 %x) {
entry:
  %y = add i32 %z, 1
  %z = add i32 %x, 1
  ret i32 %y
}
