# PD_CHECK_GLOO
# -------------
# gloo carries host-memory collectives between processes. --with-gloo=DIR
# looks in DIR/include and DIR/lib; guess (the default) looks in the
# compiler's default paths (Debian's libgloo-dev) and fails with a clear
# message if absent; --without-gloo builds a library whose host path only
# serves single-process worlds.
AC_DEFUN([PD_CHECK_GLOO], [
  AC_ARG_WITH([gloo],
    [AS_HELP_STRING([--with-gloo@<:@=DIR@:>@],
      [gloo for host collectives (default: guess; DIR/include and DIR/lib)])],
    [], [with_gloo=guess])
  pd_have_gloo=no
  pd_gloo_summary=no
  GLOO_CPPFLAGS=
  GLOO_LDFLAGS=
  GLOO_LIBS=
  AS_IF([test "x$with_gloo" != xno], [
    AS_IF([test "x$with_gloo" != xyes && test "x$with_gloo" != xguess],
      [GLOO_CPPFLAGS="-I$with_gloo/include"
       GLOO_LDFLAGS="-L$with_gloo/lib -Wl,-rpath,$with_gloo/lib"])
    AC_LANG_PUSH([C++])
    pd_save_CPPFLAGS=$CPPFLAGS; pd_save_LDFLAGS=$LDFLAGS; pd_save_LIBS=$LIBS
    pd_save_CXXFLAGS=$CXXFLAGS
    CPPFLAGS="$CPPFLAGS $GLOO_CPPFLAGS"
    CXXFLAGS="$CXXFLAGS -std=c++17"
    LDFLAGS="$LDFLAGS $GLOO_LDFLAGS"
    LIBS="-lgloo $LIBS"
    AC_MSG_CHECKING([for gloo (option-style allreduce, TCP transport)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM(
        [[#include <gloo/allreduce.h>
          #include <gloo/transport/tcp/device.h>]],
        [[gloo::transport::tcp::attr a("127.0.0.1");
          auto fn = &gloo::allreduce; (void)fn; (void)a;]])],
      [pd_have_gloo=yes], [pd_have_gloo=no])
    AC_MSG_RESULT([$pd_have_gloo])
    AS_IF([test $pd_have_gloo = yes],
      [AC_COMPUTE_INT([pd_gloo_major], [GLOO_VERSION_MAJOR], [#include <gloo/config.h>], [pd_gloo_major=0])
       AC_COMPUTE_INT([pd_gloo_minor], [GLOO_VERSION_MINOR], [#include <gloo/config.h>], [pd_gloo_minor=0])
       AC_COMPUTE_INT([pd_gloo_patch], [GLOO_VERSION_PATCH], [#include <gloo/config.h>], [pd_gloo_patch=0])
       pd_gloo_summary="yes ($pd_gloo_major.$pd_gloo_minor.$pd_gloo_patch)"])
    CPPFLAGS=$pd_save_CPPFLAGS; LDFLAGS=$pd_save_LDFLAGS; LIBS=$pd_save_LIBS
    CXXFLAGS=$pd_save_CXXFLAGS
    AC_LANG_POP([C++])
    AS_IF([test $pd_have_gloo = no],
      [AC_MSG_ERROR([gloo not found (install Debian's libgloo-dev, pass --with-gloo=DIR, or --without-gloo for a single-process-only host path)])])
    GLOO_LIBS=-lgloo
    AC_DEFINE([PD_HAVE_GLOO], [1], [Define if the gloo backend is built])
    AC_DEFINE_UNQUOTED([PD_GLOO_VERSION], ["$pd_gloo_major.$pd_gloo_minor.$pd_gloo_patch"], [gloo version built against])
  ])
  AM_CONDITIONAL([PD_HAVE_GLOO], [test $pd_have_gloo = yes])
  AC_SUBST([GLOO_CPPFLAGS])
  AC_SUBST([GLOO_LDFLAGS])
  AC_SUBST([GLOO_LIBS])
])
