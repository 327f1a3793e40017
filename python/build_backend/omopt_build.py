"""omopt_build.py — the PEP 517 backend of pyproject.toml: meson-python's (mesonpy), found in
the build environment or, when pip's isolated environment lacks it, in the system Python's
package folders (Debian's python3-mesonpy in /usr/lib/python3/dist-packages), so that
`pip install .` needs no download."""
import glob
import os
import shutil
import sys

try:
    import mesonpy
except ImportError:
    for d in ['/usr/lib/python3/dist-packages',
              *glob.glob(f'/usr/lib/python3.{sys.version_info[1]}/site-packages'),
              *glob.glob(f'/usr/local/lib/python3.{sys.version_info[1]}/dist-packages')]:
        if d not in sys.path:
            sys.path.append(d)
    try:
        import mesonpy
    except ImportError as e:
        raise ImportError('building omopt\'s wheel needs meson-python: apt-get install '
                          'python3-mesonpy (Debian), or pip install meson-python ninja') from e
    # pip's isolation hides the system's packages from the processes it starts, through a
    # sitecustomize on PYTHONPATH; the system's meson (a Python program) needs them
    paths = [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
             if p and not os.path.isfile(os.path.join(p, 'sitecustomize.py'))]
    if paths:
        os.environ['PYTHONPATH'] = os.pathsep.join(paths)
    else:
        os.environ.pop('PYTHONPATH', None)

build_wheel = mesonpy.build_wheel
build_sdist = mesonpy.build_sdist


def get_requires_for_build_wheel(config_settings=None):
    """Nothing but ninja when it is missing: the wheel holds no library outside the package,
    so meson-python's patchelf (for the RPATHs of bundled libraries) is never run."""
    return [] if shutil.which('ninja') else ['ninja']


def get_requires_for_build_sdist(config_settings=None):
    return []
