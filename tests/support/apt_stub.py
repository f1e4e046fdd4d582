"""apt for the LibreOffice recipe's tests: a stand-in that lists Debian's help packages and
knows no candidate version of any, so that data_prep/prepare-libreoffice.sh stops before it
downloads."""
import os

PACKAGES = ["libreoffice-help-common", "libreoffice-help-de", "libreoffice-help-en-gb",
            "libreoffice-help-en-us", "libreoffice-help-pt", "libreoffice-help-pt-br",
            "libreoffice-help-zh-cn", "libreoffice-help-zh-tw"]


def apt_stub(folder, packages=PACKAGES):
    """An environment whose apt-cache lists ``packages`` and knows no candidate version of
    any, and whose python (prepare-corpus.sh's) records its arguments in folder/python.args."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "packages").write_text("".join(f"{package}\n" for package in packages))
    (folder / "apt-cache").write_text(
        "#!/bin/sh\ncase $1 in\n"
        f'pkgnames) grep "^$2" "{folder}/packages" ;;\n'
        'policy) echo "$2:"; echo "  Candidate: (none)" ;;\nesac\n')
    (folder / "python").write_text(f'#!/bin/sh\necho "$*" > "{folder}/python.args"\n')
    for name in ("apt-cache", "python"):
        (folder / name).chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
