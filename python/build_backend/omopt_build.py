"""omopt_build.py — the PEP 517 backend of pyproject.toml: meson-python's (mesonpy), found in
the build environment or, when pip's isolated environment lacks it, in the system Python's
package folders (Debian's python3-mesonpy in /usr/lib/python3/dist-packages), so that
`pip install .` needs no download."""
import glob
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

build_wheel = mesonpy.build_wheel
build_sdist = mesonpy.build_sdist
get_requires_for_build_wheel = getattr(mesonpy, 'get_requires_for_build_wheel',
                                       lambda config_settings=None: [])
get_requires_for_build_sdist = getattr(mesonpy, 'get_requires_for_build_sdist',
                                       lambda config_settings=None: [])
for _hook in ('build_editable', 'get_requires_for_build_editable'):
    if hasattr(mesonpy, _hook):
        globals()[_hook] = getattr(mesonpy, _hook)
