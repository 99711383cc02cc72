#!/bin/sh
# gen-unsupported.sh MPI_H SRC_API_DIR > unsupported.c
#
# Writes a C file with one stub for every function Open MPI's mpi.h
# declares (its PMPI_ prototypes) that no .c file in SRC_API_DIR
# implements. A binary linked against Open MPI may name any of them, and
# under bind-now (-z now) the loader resolves every name at start-up, so
# each must exist even if the program never calls it. A stub raises
# MPI_ERR_UNSUPPORTED_OPERATION through the communicator's error handler,
# naming the function.
#
# "Implemented" means an `#pragma weak MPI_X = PMPI_X` line in a .c file
# of SRC_API_DIR, the convention every entry point follows; the generated
# file itself (unsupported.c) is not counted, so the script can be rerun
# in a source tree that already holds its output.
#
# The MPI-1 functions removed in MPI-3.0 (MPI_Address, MPI_Type_struct,
# ...) sit in mpi.h under a condition that hides them unless Open MPI was
# configured with --enable-mpi1-compatibility; Open MPI's libmpi exports
# them either way. Their prototypes, and the typedefs of that block, are
# repeated here under the negation of mpi.h's own condition, so the stubs
# are declared exactly once in either configuration. mpi.h's MPI_ names for
# them may be function-like macros that refuse to compile; `#pragma weak`
# names MPI_X without parentheses, which such a macro leaves alone.
#
# POSIX sh and awk only: it runs at build time on any machine that builds
# pdmpi.
set -eu

if [ "$#" -ne 2 ]; then
    echo "usage: $0 MPI_H SRC_API_DIR > unsupported.c" >&2
    exit 2
fi
mpi_h=$1
src_api_dir=$2
if [ ! -r "$mpi_h" ]; then
    echo "$0: cannot read $mpi_h" >&2
    exit 1
fi
if [ ! -d "$src_api_dir" ]; then
    echo "$0: no directory $src_api_dir" >&2
    exit 1
fi

# The implementations first (any order), then mpi.h, which is read last
# so every implemented name is known before the first stub is decided.
# An empty directory leaves the unexpanded pattern, which awk would fail
# to open: pass /dev/null instead.
set -- "$src_api_dir"/*.c
[ -e "$1" ] || set -- /dev/null

awk -v mpi_h="$mpi_h" '
function trim(s) {
    gsub(/[ \t\n]+/, " ", s)
    sub(/^ /, "", s)
    sub(/ $/, "", s)
    return s
}

function fail(msg) {
    print "gen-unsupported.sh: " mpi_h ": " msg > "/dev/stderr"
    failed = 1
    exit 1
}

# Removes /* */ comments, which may span lines; in_comment carries over.
function strip_comments(line,    out, at) {
    out = ""
    while (line != "") {
        if (in_comment) {
            at = index(line, "*/")
            if (at == 0)
                return out
            line = substr(line, at + 2)
            in_comment = 0
        } else {
            at = index(line, "/*")
            if (at == 0)
                return out line
            out = out substr(line, 1, at - 1) " "
            line = substr(line, at + 2)
            in_comment = 1
        }
    }
    return out
}

# Tracks #if nesting and whether the current line is in the part of an
# MPI-1 compatibility conditional that mpi.h only sometimes compiles.
function directive(text,    word, cond) {
    word = text
    sub(/^[ \t]*#[ \t]*/, "", word)
    cond = word
    sub(/^[a-z]+[ \t]*/, "", cond)
    sub(/[^a-z].*$/, "", word)
    if (word == "if" || word == "ifdef" || word == "ifndef") {
        depth++
        compat_cond[depth] = ""
        cond = trim(cond)
        if (word == "ifdef")
            cond = "defined(" cond ")"
        else if (word == "ifndef")
            cond = "!defined(" cond ")"
        if (cond ~ /MPI1_COMPAT/)
            compat_cond[depth] = cond
        in_else[depth] = 0
    } else if (word == "elif" || word == "else") {
        in_else[depth] = 1
    } else if (word == "endif") {
        depth--
    }
}

# The condition under which mpi.h does NOT compile the current line, for
# a declaration this file must then repeat; "" when mpi.h always does;
# "?" for a shape of conditionals this script does not understand.
function hiding_condition(    level, found) {
    found = ""
    for (level = 1; level <= depth; level++) {
        if (compat_cond[level] == "")
            continue
        # Only the simple shape Open MPI uses is understood: one
        # compatibility #if, declarations in its first branch.
        if (found != "" || in_else[level])
            return "?"
        found = "!(" compat_cond[level] ")"
    }
    return found
}

# Splits a parameter list on its top-level commas into params[1..n].
function split_params(list, params,    n, level, i, c, cur) {
    n = 0
    level = 0
    cur = ""
    for (i = 1; i <= length(list); i++) {
        c = substr(list, i, 1)
        if (c == "(" || c == "[")
            level++
        else if (c == ")" || c == "]")
            level--
        if (c == "," && level == 0) {
            params[++n] = trim(cur)
            cur = ""
        } else {
            cur = cur c
        }
    }
    cur = trim(cur)
    if (cur != "")
        params[++n] = cur
    return n
}

# True when a declarator holds only a type, as in "MPI_Comm" or
# "unsigned int *": the definition then needs a name of its own.
function is_unnamed(decl,    words, n, i, kept, last) {
    gsub(/[^A-Za-z0-9_]+/, " ", decl)
    n = split(trim(decl), words, " ")
    kept = 0
    last = ""
    for (i = 1; i <= n; i++) {
        if (words[i] ~ /^(const|volatile|restrict|struct|union|enum)$/)
            continue
        kept++
        last = words[i]
    }
    return kept < 2 || last ~ /^(void|char|short|int|long|float|double|signed|unsigned|_Bool)$/
}

# The name a parameter goes by in the stub (giving one to an unnamed
# parameter by rewriting params[i]), or "" for "void" and "...".
function param_name(params, i,    p, base, dims, name) {
    p = params[i]
    if (p == "void" || p == "...")
        return ""
    if (p ~ /\([ \t]*\*/) {
        # A function pointer: the name follows "(*".
        if (match(p, /\([ \t]*\*[ \t]*[A-Za-z_][A-Za-z0-9_]*/)) {
            name = substr(p, RSTART, RLENGTH)
            sub(/^\([ \t]*\*[ \t]*/, "", name)
            return name
        }
        name = "unnamed_" i
        sub(/\([ \t]*\*[ \t]*\)/, "(*" name ")", p)
        params[i] = p
        return name
    }
    base = p
    dims = ""
    if (match(p, /\[/)) {
        base = trim(substr(p, 1, RSTART - 1))
        dims = substr(p, RSTART)
    }
    if (is_unnamed(base)) {
        name = "unnamed_" i
        params[i] = base " " name dims
        return name
    }
    match(base, /[A-Za-z_][A-Za-z0-9_]*$/)
    return substr(base, RSTART, RLENGTH)
}

# What a stub returns after raising the error: the null handle for a
# handle type (as *_f2c conversions give), else zero.
function null_value(type) {
    if (type in null_handle)
        return null_handle[type]
    return "0"
}

function emit_stub(type, name, list, hidden,    call, params, n, i, pname, casts, comm, body) {
    call = substr(name, 2)
    n = split_params(list, params)
    casts = ""
    for (i = 1; i <= n; i++) {
        pname = param_name(params, i)
        if (pname != "")
            casts = casts "    (void)" pname ";\n"
    }
    # The error handler of the first communicator argument applies, as
    # for the implemented calls (pd_raise accepts MPI_COMM_NULL and
    # invalid ones); without one, that of MPI_COMM_WORLD, which the
    # message then names.
    comm = "MPI_COMM_WORLD"
    for (i = n; i >= 1; i--)
        if (params[i] ~ /^MPI_Comm [A-Za-z_][A-Za-z0-9_]*$/) {
            comm = params[i]
            sub(/^MPI_Comm /, "", comm)
        }

    list = ""
    for (i = 1; i <= n; i++)
        list = list (i > 1 ? ", " : "") params[i]
    if (list == "")
        list = "void"

    if (hidden != "")
        hidden_decls[hidden] = hidden_decls[hidden] \
            "OMPI_DECLSPEC " type (type ~ /\*$/ ? "" : " ") name "(" list ");\n"

    if (type == "int")
        body = "    return pd_unsupported(" comm ", \"" call "\");\n"
    else if (type == "void")
        body = "    (void)pd_unsupported(" comm ", \"" call "\");\n"
    else
        body = "    (void)pd_unsupported(" comm ", \"" call "\");\n" \
               "    return " null_value(type) ";\n"
    stubs = stubs "\n#pragma weak " call " = " name "\n" \
        type (type ~ /\*$/ ? "" : " ") name "(" list ")\n{\n" casts body "}\n"
    nstubs++
}

# One complete declaration (possibly joined from several lines).
function statement(text, hidden,    name, type, at, i, c, level, list) {
    text = trim(text)
    if (text ~ /^typedef /) {
        if (hidden != "" && hidden != "?")
            hidden_decls[hidden] = hidden_decls[hidden] text "\n"
        return
    }
    # The declarator is what precedes the first "(": the PMPI_ names in
    # deprecation messages further on are not functions being declared.
    at = index(text, "(")
    if (at == 0)
        return
    type = substr(text, 1, at - 1)
    if (!match(type, /PMPI_[A-Za-z0-9_]+[ \t]*$/) || substr(type, RSTART - 1, 1) ~ /[A-Za-z0-9_]/)
        return
    name = trim(substr(type, RSTART))
    type = substr(type, 1, RSTART - 1)
    sub(/^OMPI_DECLSPEC/, "", type)
    type = trim(type)
    if (type == "" || type ~ /[^A-Za-z0-9_ *]/)
        fail("cannot read the return type of " name)

    at++
    level = 1
    list = ""
    for (i = at; i <= length(text) && level > 0; i++) {
        c = substr(text, i, 1)
        if (c == "(")
            level++
        else if (c == ")")
            level--
        if (level > 0)
            list = list c
    }
    if (level != 0)
        fail("unbalanced parameter list of " name)
    if (hidden == "?")
        fail("cannot tell when mpi.h declares " name \
             ": an MPI-1 compatibility conditional of an unexpected shape")

    if (name in seen)
        return
    seen[name] = 1
    ndeclared++
    if (substr(name, 2) in implemented) {
        nimplemented++
        return
    }
    emit_stub(type, name, trim(list), hidden)
}

BEGIN {
    null_handle["MPI_Comm"] = "MPI_COMM_NULL"
    null_handle["MPI_Datatype"] = "MPI_DATATYPE_NULL"
    null_handle["MPI_Errhandler"] = "MPI_ERRHANDLER_NULL"
    null_handle["MPI_File"] = "MPI_FILE_NULL"
    null_handle["MPI_Group"] = "MPI_GROUP_NULL"
    null_handle["MPI_Info"] = "MPI_INFO_NULL"
    null_handle["MPI_Message"] = "MPI_MESSAGE_NULL"
    null_handle["MPI_Op"] = "MPI_OP_NULL"
    null_handle["MPI_Request"] = "MPI_REQUEST_NULL"
    null_handle["MPI_Win"] = "MPI_WIN_NULL"
}

# --- the implementations: collect their "#pragma weak MPI_X = PMPI_X" ---
FNR == 1 && FILENAME != mpi_h {
    skipping = FILENAME ~ /(^|\/)unsupported\.c$/ || $0 ~ /Generated by gen-unsupported\.sh/
}
FILENAME != mpi_h {
    if (!skipping && match($0, /^[ \t]*#[ \t]*pragma[ \t]+weak[ \t]+MPI_[A-Za-z0-9_]+/)) {
        pragma = substr($0, RSTART, RLENGTH)
        sub(/^.*[ \t]/, "", pragma)
        implemented[pragma] = 1
    }
    next
}

# --- mpi.h ---------------------------------------------------------------
{
    line = strip_comments($0)
    if (pending_directive != "" || line ~ /^[ \t]*#/) {
        pending_directive = pending_directive line
        if (pending_directive ~ /\\[ \t]*$/) {
            sub(/\\[ \t]*$/, " ", pending_directive)
            next
        }
        directive(pending_directive)
        pending_directive = ""
        next
    }
    if (pending == "") {
        if (line !~ /^[ \t]*OMPI_DECLSPEC[ \t]/ && line !~ /^[ \t]*typedef[ \t]/)
            next
        pending_hidden = hiding_condition()
    }
    pending = pending " " line
    if (index(pending, ";") == 0)
        next
    statement(pending, pending_hidden)
    pending = ""
}

END {
    if (failed)
        exit 1
    if (ndeclared == 0)
        fail("no OMPI_DECLSPEC PMPI_ prototypes found; is this Open MPI'\''s mpi.h?")

    print "/* Generated by gen-unsupported.sh from " mpi_h ": do not edit."
    print " *"
    print " * Stubs for the functions mpi.h declares that pdmpi does not implement:"
    print " * " ndeclared " declared, " (nimplemented + 0) " implemented in src/api, " (nstubs + 0) " stubs here."
    print " * Each raises MPI_ERR_UNSUPPORTED_OPERATION naming the function; they"
    print " * exist so that programs linked against Open MPI load, bind-now"
    print " * included. */"
    print "#include \"api/api.h\""
    for (hidden in hidden_decls) {
        print ""
        print "/* Removed from the MPI standard; mpi.h declares these only when this"
        print " * condition is false, Open MPI exports them always. */"
        print "#if " hidden
        printf "%s", hidden_decls[hidden]
        print "#endif"
    }
    if (nstubs == 0)
        exit 0
    print ""
    print "/* The error every stub raises; call is the MPI_ name. */"
    print "static int pd_unsupported(MPI_Comm comm, const char *call)"
    print "{"
    print "    return pd_raise(comm, call, MPI_ERR_UNSUPPORTED_OPERATION,"
    print "                    \"%s is not supported by pdmpi\", call);"
    print "}"
    printf "%s", stubs
}
' "$@" "$mpi_h"
