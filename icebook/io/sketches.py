"""Statistics blobs of Puffin files (puffin-spec "Blob types"), decoded with Apache DataSketches.

``apache-datasketches-theta-v1``: a serialized compact theta sketch of the distinct values of one
column, built with the library's default seed (9001); the spec asks writers to also store the
estimate as the blob property ``ndv``. Decoding needs the ``datasketches`` package from PyPI.
"""

from __future__ import annotations

from dataclasses import dataclass

from icebook.errors import EnvironmentProblem, MetadataError

THETA_BLOB = "apache-datasketches-theta-v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThetaEstimate:
    """What a theta sketch says about the number of distinct values (NDV) it saw."""

    estimate: float
    lower_bound: float
    """Lower bound of the estimate at two standard deviations (about 95% confidence)."""
    upper_bound: float
    exact: bool
    """True when the sketch kept every hash it saw (not in estimation mode): the estimate is the count."""
    retained: int
    """Hashes kept in the sketch."""


def decode_theta_sketch(blob: bytes, *, path: str = "<puffin>") -> ThetaEstimate:
    """Decode one ``apache-datasketches-theta-v1`` blob (its bytes, already decompressed)."""
    try:
        import datasketches
    except ImportError:
        raise EnvironmentProblem(
            "decoding theta sketches needs the Apache DataSketches package: `pip install datasketches`"
        ) from None
    try:
        sketch = datasketches.compact_theta_sketch.deserialize(blob)
    except (RuntimeError, ValueError) as exc:
        raise MetadataError(path, THETA_BLOB, f"not a theta sketch: {exc}", kind="puffin file") from None
    return ThetaEstimate(
        estimate=float(sketch.get_estimate()),
        lower_bound=float(sketch.get_lower_bound(2)),
        upper_bound=float(sketch.get_upper_bound(2)),
        exact=not sketch.is_estimation_mode(),
        retained=int(sketch.num_retained),
    )
