"""man.py OMOPT OUT — writes the omopt(1) man page from the command's own --help texts, so the
page and the program cannot disagree (meson runs it at build time; installed to man1)."""
import subprocess
import sys

COMMANDS = ['simplify', 'info', 'run', 'dot']


def help_text(omopt, *args):
    r = subprocess.run([omopt, *args, '--help'], capture_output=True, text=True)
    return (r.stdout or r.stderr).rstrip('\n')


def roff(text):
    """Preformatted text, escaped for troff: backslashes, leading dots and quotes."""
    out = []
    for line in text.split('\n'):
        line = line.replace('\\', '\\e')
        if line.startswith(('.', "'")):
            line = '\\&' + line
        out.append(line)
    return '\n'.join(out)


def main():
    omopt, out = sys.argv[1], sys.argv[2]
    version = subprocess.run([omopt, '--version'], capture_output=True, text=True).stdout
    page = ['.TH OMOPT 1 "" "omopt %s" "User Commands"' % (version.split()[-1] if version
                                                          else ''),
            '.SH NAME', 'omopt \\- simplify, run and draw ONNX models',
            '.SH SYNOPSIS', '.nf', roff(help_text(omopt)), '.fi']
    for c in COMMANDS:
        page += ['.SH "omopt %s"' % c, '.nf', roff(help_text(omopt, c)), '.fi']
    page += ['.SH "EXIT STATUS"', '0 success, 1 a model, input or I/O error (the message names '
             'the node), 2 a usage error.',
             '.SH "SEE ALSO"', 'The Python package (python3 \\-m omopt), omopt.h, '
             'pkg-config omopt.']
    with open(out, 'w') as f:
        f.write('\n'.join(page) + '\n')


if __name__ == '__main__':
    main()
