# PD_CHECK_HEADER_DEP(NAME, OPTION, HEADER, DEFAULT-DIRS, DEFINE, HELP)
# ---------------------------------------------------------------------
# Shared shape of the optional device/launcher dependencies: their
# libraries are loaded with dlopen at run time, so the build only needs
# HEADER. --with-OPTION=DIR looks in DIR/include; guess (default) looks
# in DEFAULT-DIRS and the compiler's paths; yes fails if absent; no skips.
# Sets pd_NAME_summary, NAME_CPPFLAGS, the AM conditional DEFINE and the
# config.h macro DEFINE.
AC_DEFUN([PD_CHECK_HEADER_DEP], [
  AC_ARG_WITH([$2], [AS_HELP_STRING([--with-$2@<:@=DIR@:>@], [$6 (default: guess)])],
    [], [with_$1=guess])
  pd_have_$1=no
  pd_$1_summary=no
  $1_CPPFLAGS=
  AS_IF([test "x$with_$1" != xno], [
    pd_dirs="$4"
    AS_IF([test "x$with_$1" != xyes && test "x$with_$1" != xguess],
      [pd_dirs="$with_$1/include $with_$1"])
    for pd_dir in $pd_dirs ""; do
      AS_IF([test $pd_have_$1 = no], [
        pd_save_CPPFLAGS=$CPPFLAGS
        AS_IF([test -n "$pd_dir"], [CPPFLAGS="$CPPFLAGS -I$pd_dir"])
        AS_UNSET([ac_cv_header_]AS_TR_SH([$3]))
        AC_CHECK_HEADER([$3],
          [pd_have_$1=yes
           AS_IF([test -n "$pd_dir"], [$1_CPPFLAGS="-I$pd_dir"])
           pd_$1_summary="yes (${pd_dir:-default path}/$3)"])
        CPPFLAGS=$pd_save_CPPFLAGS])
    done
    AS_IF([test $pd_have_$1 = no && test "x$with_$1" != xguess],
      [AC_MSG_ERROR([--with-$2 was given but $3 was not found])])
  ])
  AS_IF([test $pd_have_$1 = yes], [AC_DEFINE([$5], [1], [Define if $3 is available at build time])])
  AM_CONDITIONAL([$5], [test $pd_have_$1 = yes])
  AC_SUBST($1_CPPFLAGS)
])
