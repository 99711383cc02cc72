#!/usr/bin/env python3
"""Runs the code blocks of markdown files, as tests/docs.sh sets them up.

    docs_check.py SRCDIR SCRATCH FILE...

Each FILE's blocks run in order in SCRATCH/<file name>/ (which holds a
copy of examples/). How a block is taken depends on its fence's language
and on an HTML comment on the line before it (docs/testing.md has the
table): sh blocks run under bash -e; a text block is checked against the
output of the sh block before it; "file NAME" writes the block to NAME;
"not run: WHY" skips it and says why; any other block fails. Prints one
ok / not ok line per block and exits non-zero if any failed.
"""
import os
import re
import subprocess
import sys

MARKER = re.compile(r'^<!-- docs-test: (.*) -->$')
TIMEOUT = int(os.environ.get('PD_TEST_TIMEOUT', '180'))
# A run of hexadecimal digits with a decimal one in it is a number, a pid,
# a time or a hash: it stands for any other.
NUMBER = re.compile(r'[0-9A-Fa-f]*[0-9][0-9A-Fa-f]*')

results = {'passed': 0, 'failed': 0, 'num': 0}


def report(passed, desc, detail=''):
    results['num'] += 1
    results['passed' if passed else 'failed'] += 1
    print('%s %d - %s' % ('ok' if passed else 'not ok', results['num'], desc))
    if not passed and detail:
        for line in detail.rstrip('\n').split('\n')[-30:]:
            print('#   ' + line)


def blocks(path):
    """(line, language, marker, text) for every fenced block of PATH."""
    lines = open(path).read().split('\n')
    i = 0
    while i < len(lines):
        if lines[i].startswith('```'):
            language = lines[i][3:].strip().split(' ')[0]
            prev = lines[i - 1] if i > 0 else ''
            m = MARKER.match(prev)
            marker = m.group(1) if m else ''
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith('```'):
                j += 1
            yield start, language, marker, '\n'.join(lines[start:j]) + '\n'
            i = j + 1
        else:
            i += 1


def normal(line):
    return ' '.join(NUMBER.sub('N', line).split())


def first_word(line):
    words = line.split()
    return words[0] if words else ''


def command_words(text):
    return ' '.join(text.replace('\\\n', ' ').split())


def check_two_commands(srcdir, which, text, where):
    ci = open(os.path.join(srcdir, '.ci', 'run')).read()
    ci = ci[ci.index('scripts/install-deps.sh'):]
    if which == 'command 2':
        report(command_words(text) == command_words(ci),
               '%s: command 2 is what .ci/run runs' % where,
               'README:  %s\n.ci/run: %s' % (command_words(text),
                                             command_words(ci)))
        return
    build = command_words(ci)
    build = build[:build.index('make -j2 &&') + len('make -j2 &&')]
    want = build + ' make main-job'
    report(command_words(text) == want,
           '%s: command 1 is .ci/run\'s build and make main-job' % where,
           'README: %s\nwanted: %s' % (command_words(text), want))
    builddir = os.environ['top_builddir']
    run = subprocess.run(['make', '-C', builddir, 'main-job'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=TIMEOUT)
    report(run.returncode == 0 and 'final weights match' in run.stdout,
           '%s: make main-job runs (the trainer checks its weights)' % where,
           run.stdout)


def check_file(srcdir, scratch, path):
    rel = os.path.relpath(path, srcdir)
    output = None
    for line, language, marker, text in blocks(path):
        where = '%s:%d' % (rel, line)
        if marker.startswith('not run: '):
            print('# not run: %s: %s' % (where, marker[len('not run: '):]))
        elif marker in ('command 1', 'command 2'):
            check_two_commands(srcdir, marker, text, where)
        elif marker.startswith('file '):
            name = marker[len('file '):]
            with open(os.path.join(scratch, name), 'w') as f:
                f.write(text)
        elif language == 'sh' and marker in ('', 'in the build tree'):
            cwd = scratch if marker == '' else os.environ['top_builddir']
            try:
                run = subprocess.run(['bash', '-e', '-c', text], cwd=cwd,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     universal_newlines=True, timeout=TIMEOUT)
                output, status = run.stdout, run.returncode
            except subprocess.TimeoutExpired as e:
                output = e.output or ''
                if isinstance(output, bytes):
                    output = output.decode(errors='replace')
                status = 'timeout after %d s' % TIMEOUT
            report(status == 0, '%s: the sh block runs' % where,
                   text + '--- exit status %s, output:\n%s' % (status, output))
        elif language == 'text' and marker in ('', 'keys'):
            if output is None:
                report(False, '%s: an output block follows an sh block' % where)
                continue
            if marker == 'keys':
                have = {first_word(l) for l in output.split('\n')}
                missing = [l for l in text.split('\n')
                           if l.strip() and first_word(l) not in have]
                how = 'each line\'s first word begins a line of its output'
            else:
                have = {normal(l) for l in output.split('\n')}
                missing = [l for l in text.split('\n')
                           if l.strip() and normal(l) not in have]
                how = 'each line appears in its output (numbers aside)'
            report(not missing, '%s: %s' % (where, how),
                   'not in the output:\n' + '\n'.join(missing) +
                   '\n--- the output:\n' + output)
        elif language == 'text' and marker == 'paths':
            missing = [first_word(l) for l in text.split('\n')
                       if l and not l[0].isspace() and
                       not os.path.exists(os.path.join(srcdir, first_word(l)))]
            report(not missing, '%s: every path named exists' % where,
                   'missing: ' + ' '.join(missing))
        else:
            report(False, '%s: a block this test knows how to take '
                   '(```%s, marker "%s")' % (where, language, marker))


def main():
    srcdir, scratch_root, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    for path in files:
        scratch = os.path.join(scratch_root,
                               os.path.basename(path).replace('.md', ''))
        subprocess.run(['mkdir', '-p', scratch], check=True)
        subprocess.run(['cp', '-R', os.path.join(srcdir, 'examples'),
                        scratch], check=True)
        check_file(srcdir, scratch, path)
    print('%d passed, %d failed' % (results['passed'], results['failed']))
    sys.exit(1 if results['failed'] else 0)


if __name__ == '__main__':
    main()
