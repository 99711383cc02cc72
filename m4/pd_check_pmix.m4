# PD_CHECK_PMIX
# -------------
# PMIx client headers (Debian keeps them in a pmix2 subtree); libpmix is
# loaded with dlopen only when a PMIx launcher is detected.
AC_DEFUN([PD_CHECK_PMIX], [
  PD_CHECK_HEADER_DEP([pmix], [pmix], [pmix.h],
    [/usr/lib/x86_64-linux-gnu/pmix2/include /usr/include/pmix /usr/include], [PD_HAVE_PMIX_H],
    [PMIx headers in DIR/include])
])
