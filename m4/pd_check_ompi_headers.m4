# PD_CHECK_OMPI_HEADERS
# ---------------------
# pdmpi is compiled against Open MPI's own mpi.h so that its handles,
# constants and predefined objects are Open MPI's ABI. Look for it with
# --with-ompi-headers=DIR, else `mpicc -showme:incdirs`, else pkg-config
# ompi-c, else Debian's multiarch location. Required.
AC_DEFUN([PD_CHECK_OMPI_HEADERS], [
  AC_ARG_WITH([ompi-headers],
    [AS_HELP_STRING([--with-ompi-headers=DIR],
      [directory holding Open MPI's mpi.h (default: guess from mpicc, pkg-config ompi-c, Debian's path)])],
    [], [with_ompi_headers=guess])
  AS_IF([test "x$with_ompi_headers" = xno],
    [AC_MSG_ERROR([Open MPI's mpi.h is required: pdmpi implements Open MPI's ABI])])

  pd_ompi_incdir=
  AS_IF([test "x$with_ompi_headers" != xguess && test "x$with_ompi_headers" != xyes],
    [pd_ompi_incdir=$with_ompi_headers],
    [AC_PATH_PROG([PD_OMPI_MPICC], [mpicc.openmpi], [], [$PATH])
     AS_IF([test -z "$PD_OMPI_MPICC"], [AC_PATH_PROG([PD_OMPI_MPICC], [mpicc])])
     for pd_dir in `$PD_OMPI_MPICC -showme:incdirs 2>/dev/null` \
                   `$PKG_CONFIG --variable=includedir ompi-c 2>/dev/null` \
                   /usr/lib/$host_cpu-$host_os/openmpi/include \
                   /usr/lib/x86_64-linux-gnu/openmpi/include; do
       AS_IF([test -z "$pd_ompi_incdir" && test -f "$pd_dir/mpi.h" && grep -q OMPI_MAJOR_VERSION "$pd_dir/mpi.h"],
         [pd_ompi_incdir=$pd_dir])
     done])

  AC_MSG_CHECKING([for Open MPI's mpi.h])
  AS_IF([test -n "$pd_ompi_incdir" && test -f "$pd_ompi_incdir/mpi.h" && grep -q OMPI_MAJOR_VERSION "$pd_ompi_incdir/mpi.h"],
    [AC_MSG_RESULT([$pd_ompi_incdir/mpi.h])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([Open MPI's mpi.h not found; install libopenmpi-dev or pass --with-ompi-headers=DIR])])

  dnl Open MPI puts the mpi_portable_platform.h helper in a subdirectory.
  PD_OMPI_CPPFLAGS="-I$pd_ompi_incdir"
  AS_IF([test -d "$pd_ompi_incdir/openmpi"], [PD_OMPI_CPPFLAGS="$PD_OMPI_CPPFLAGS -I$pd_ompi_incdir/openmpi"])
  pd_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $PD_OMPI_CPPFLAGS"
  AC_COMPUTE_INT([pd_ompi_major], [OMPI_MAJOR_VERSION], [#include <mpi.h>],
    [AC_MSG_ERROR([cannot read OMPI_MAJOR_VERSION from $pd_ompi_incdir/mpi.h])])
  CPPFLAGS=$pd_save_CPPFLAGS
  AS_IF([test "$pd_ompi_major" -lt 4],
    [AC_MSG_ERROR([Open MPI >= 4.0 headers are required (found major version $pd_ompi_major)])])
  AC_SUBST([PD_OMPI_CPPFLAGS])
  AC_SUBST([PD_OMPI_INCDIR], [$pd_ompi_incdir])
])
