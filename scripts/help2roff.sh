#!/bin/sh
# help2roff.sh NAME SECTION "ONE-LINE SUMMARY" VERSION "SEE ALSO" < HELP > PAGE
#
# A man page from a program's --help text, so that the two cannot say
# different things. The help text follows one layout:
#
#   Usage: prog ...            synopsis lines (more may follow, indented)
#   paragraphs                 the description
#   Options:                   a list: "  TERM   description", the
#     -x, --xx ARG   text      description's further lines indented more
#   Some heading:              a line ending in ":" before a list starts
#     TERM   text              another list, under that heading's words
#   Environment read by X:     such a list becomes ENVIRONMENT
#   Exit status: ...           such a paragraph becomes EXIT STATUS
#
# POSIX sh and awk only.
set -eu
if [ "$#" -ne 5 ]; then
    echo "usage: $0 NAME SECTION SUMMARY VERSION SEEALSO < HELP > PAGE" >&2
    exit 2
fi
awk -v name="$1" -v section="$2" -v summary="$3" -v version="$4" \
    -v seealso="$5" '
# Text for roff: backslashes doubled, hyphens as \-, a leading . or '\''
# guarded.
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.'\'']/)
        s = "\\&" s
    return s
}
function flush_entry() {
    if (term != "") {
        print ".TP"
        print ".B " esc(term)
        print esc(desc)
    }
    term = ""
    desc = ""
}
function heading(h) {
    flush_entry()
    print ".SH " h
}
BEGIN {
    print ".TH " toupper(name) " " section " \"\" \"pdmpi " version "\" \"pdmpi manual\""
    print ".SH NAME"
    print esc(name) " \\- " esc(summary)
    state = "start"
}
/^Usage: / {
    print ".SH SYNOPSIS"
    print ".nf"
    sub(/^Usage: +/, "")
    print esc($0)
    state = "synopsis"
    next
}
state == "synopsis" && /^ +[^ ]/ {
    sub(/^ +/, "")
    print esc($0)
    next
}
state == "synopsis" {
    print ".fi"
    print ".SH DESCRIPTION"
    state = "text"
}
/^Options:$/ { heading("OPTIONS"); state = "list"; next }
/^Environment read by / { heading("ENVIRONMENT"); state = "list"; next }
/^Exit status: / {
    heading("EXIT STATUS")
    sub(/^Exit status: +/, "")
    print esc($0)
    state = "text"
    next
}
/^$/ {
    flush_entry()
    if (state != "start")
        print ".PP"
    state = state == "list" ? "text" : state
    next
}
# A list entry: two spaces, a term, two or more spaces, its text.
/^  [^ ]/ && state != "start" {
    flush_entry()
    line = $0
    sub(/^  /, "", line)
    if (match(line, /  +/)) {
        term = substr(line, 1, RSTART - 1)
        desc = substr(line, RSTART + RLENGTH)
    } else {
        term = line
        desc = ""
    }
    state = "list"
    next
}
# A further line of the entry above.
/^        +[^ ]/ && state == "list" && term != "" {
    line = $0
    sub(/^ +/, "", line)
    desc = desc " " line
    next
}
{
    flush_entry()
    if (state == "list") {
        print ".PP"     # the list ends: back to the margin
        state = "text"
    }
    print esc($0)
}
END {
    flush_entry()
    if (state == "synopsis")
        print ".fi"
    print ".SH SEE ALSO"
    print esc(seealso)
}
'
