# PD_CHECK_CUDA
# -------------
# CUDA runtime headers, for the device-memory routing; libcudart itself is
# loaded with dlopen at run time so the library also runs without CUDA.
AC_DEFUN([PD_CHECK_CUDA], [
  PD_CHECK_HEADER_DEP([cuda], [cuda], [cuda_runtime_api.h],
    [/usr/local/cuda/include /usr/include], [PD_HAVE_CUDA_H],
    [CUDA runtime headers in DIR/include])
])
