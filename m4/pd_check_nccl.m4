# PD_CHECK_NCCL
# -------------
# NCCL headers (nccl.h, shipped with the CUDA toolkit or libnccl-dev);
# libnccl is loaded with dlopen at run time.
AC_DEFUN([PD_CHECK_NCCL], [
  PD_CHECK_HEADER_DEP([nccl], [nccl], [nccl.h],
    [/usr/local/cuda/include /usr/include], [PD_HAVE_NCCL_H],
    [NCCL headers in DIR/include])
])
