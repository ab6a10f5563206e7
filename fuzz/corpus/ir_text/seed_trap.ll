define void @f(ptr %p) {
  store i32 1, ptr %p
  call void @llvm.trap()
  unreachable
}
declare void @llvm.trap()
!0 = !{i32 1}
