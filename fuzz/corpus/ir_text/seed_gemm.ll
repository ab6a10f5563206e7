; ModuleID = '../../../examples/gemm.c'
source_filename = "../../../examples/gemm.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
define dso_local void @gemm(i32 noundef %0, ptr noalias nocapture noundef readonly %1, ptr noalias nocapture noundef readonly %2, ptr noalias nocapture noundef writeonly %3) local_unnamed_addr #0 {
  %5 = icmp sgt i32 %0, 0
  br i1 %5, label %6, label %19

6:                                                ; preds = %4
  %7 = zext nneg i32 %0 to i64
  %8 = zext nneg i32 %0 to i64
  %9 = zext nneg i32 %0 to i64
  %10 = zext nneg i32 %0 to i64
  %11 = zext nneg i32 %0 to i64
  %12 = zext nneg i32 %0 to i64
  br label %13

13:                                               ; preds = %6, %23
  %14 = phi i64 [ 0, %6 ], [ %24, %23 ]
  %15 = mul nuw nsw i64 %14, %8
  %16 = mul nuw nsw i64 %14, %9
  %17 = getelementptr inbounds float, ptr %1, i64 %15
  %18 = getelementptr inbounds float, ptr %3, i64 %16
  br label %20

19:                                               ; preds = %23, %4
  ret void

20:                                               ; preds = %13, %26
  %21 = phi i64 [ 0, %13 ], [ %28, %26 ]
  %22 = getelementptr inbounds float, ptr %2, i64 %21
  br label %30

23:                                               ; preds = %26
  %24 = add nuw nsw i64 %14, 1
  %25 = icmp eq i64 %24, %10
  br i1 %25, label %19, label %13, !llvm.loop !5

26:                                               ; preds = %30
  %27 = getelementptr inbounds float, ptr %18, i64 %21
  store float %38, ptr %27, align 4, !tbaa !8
  %28 = add nuw nsw i64 %21, 1
  %29 = icmp eq i64 %28, %11
  br i1 %29, label %23, label %20, !llvm.loop !12

30:                                               ; preds = %20, %30
  %31 = phi i64 [ 0, %20 ], [ %39, %30 ]
  %32 = phi float [ 0.000000e+00, %20 ], [ %38, %30 ]
  %33 = getelementptr inbounds float, ptr %17, i64 %31
  %34 = load float, ptr %33, align 4, !tbaa !8
  %35 = mul nuw nsw i64 %31, %7
  %36 = getelementptr inbounds float, ptr %22, i64 %35
  %37 = load float, ptr %36, align 4, !tbaa !8
  %38 = tail call float @llvm.fmuladd.f32(float %34, float %37, float %32)
  %39 = add nuw nsw i64 %31, 1
  %40 = icmp eq i64 %39, %12
  br i1 %40, label %26, label %30, !llvm.loop !13
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fmuladd.f32(float, float, float) #1

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
define dso_local void @gemm_permuted(i32 noundef %0, ptr noalias nocapture noundef readonly %1, ptr noalias nocapture noundef readonly %2, ptr noalias nocapture noundef %3) local_unnamed_addr #0 {
  %5 = icmp eq i32 %0, 0
  br i1 %5, label %11, label %6

6:                                                ; preds = %4
  %7 = mul i32 %0, %0
  %8 = tail call i32 @llvm.umax.i32(i32 %7, i32 1)
  %9 = zext i32 %8 to i64
  %10 = shl nuw nsw i64 %9, 2
  tail call void @llvm.memset.p0.i64(ptr noundef nonnull align 4 dereferenceable(1) %3, i8 0, i64 %10, i1 false), !tbaa !8
  br label %11

11:                                               ; preds = %6, %4
  %12 = icmp sgt i32 %0, 0
  br i1 %12, label %13, label %24

13:                                               ; preds = %11
  %14 = zext nneg i32 %0 to i64
  %15 = zext nneg i32 %0 to i64
  %16 = zext nneg i32 %0 to i64
  %17 = zext nneg i32 %0 to i64
  %18 = zext nneg i32 %0 to i64
  br label %19

19:                                               ; preds = %13, %25
  %20 = phi i64 [ 0, %13 ], [ %26, %25 ]
  %21 = mul nuw nsw i64 %20, %15
  %22 = getelementptr inbounds float, ptr %1, i64 %21
  %23 = getelementptr inbounds float, ptr %3, i64 %21
  br label %28

24:                                               ; preds = %25, %11
  ret void

25:                                               ; preds = %34
  %26 = add nuw nsw i64 %20, 1
  %27 = icmp eq i64 %26, %16
  br i1 %27, label %24, label %19, !llvm.loop !14

28:                                               ; preds = %19, %34
  %29 = phi i64 [ 0, %19 ], [ %35, %34 ]
  %30 = getelementptr inbounds float, ptr %22, i64 %29
  %31 = load float, ptr %30, align 4, !tbaa !8
  %32 = mul nuw nsw i64 %29, %14
  %33 = getelementptr inbounds float, ptr %2, i64 %32
  br label %37

34:                                               ; preds = %37
  %35 = add nuw nsw i64 %29, 1
  %36 = icmp eq i64 %35, %17
  br i1 %36, label %25, label %28, !llvm.loop !15

37:                                               ; preds = %28, %37
  %38 = phi i64 [ 0, %28 ], [ %44, %37 ]
  %39 = getelementptr inbounds float, ptr %33, i64 %38
  %40 = load float, ptr %39, align 4, !tbaa !8
  %41 = getelementptr inbounds float, ptr %23, i64 %38
  %42 = load float, ptr %41, align 4, !tbaa !8
  %43 = tail call float @llvm.fmuladd.f32(float %31, float %40, float %42)
  store float %43, ptr %41, align 4, !tbaa !8
  %44 = add nuw nsw i64 %38, 1
  %45 = icmp eq i64 %44, %18
  br i1 %45, label %34, label %37, !llvm.loop !16
}

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.umax.i32(i32, i32) #3

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nounwind willreturn memory(argmem: write) }
attributes #3 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1, !2, !3}
!llvm.ident = !{!4}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = distinct !{!5, !6, !7}
!6 = !{!"llvm.loop.mustprogress"}
!7 = !{!"llvm.loop.unroll.disable"}
!8 = !{!9, !9, i64 0}
!9 = !{!"float", !10, i64 0}
!10 = !{!"omnipotent char", !11, i64 0}
!11 = !{!"Simple C/C++ TBAA"}
!12 = distinct !{!12, !6, !7}
!13 = distinct !{!13, !6, !7}
!14 = distinct !{!14, !6, !7}
!15 = distinct !{!15, !6, !7}
!16 = distinct !{!16, !6, !7}
