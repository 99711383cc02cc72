# PD_REQUIRE_FLAG(LANG, FLAG, MESSAGE)
# -------------------------------------
# Fail configure with MESSAGE unless the LANG compiler accepts FLAG.
AC_DEFUN([PD_REQUIRE_FLAG], [
  AC_LANG_PUSH([$1])
  AC_MSG_CHECKING([whether the $1 compiler accepts $2])
  pd_save_cflags=$CFLAGS
  pd_save_cxxflags=$CXXFLAGS
  CFLAGS="$CFLAGS $2"
  CXXFLAGS="$CXXFLAGS $2"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([$3])])
  CFLAGS=$pd_save_cflags
  CXXFLAGS=$pd_save_cxxflags
  AC_LANG_POP([$1])
])
