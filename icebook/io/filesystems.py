"""The file systems behind table locations: object stores, HDFS and local disk, through ``pyarrow.fs``
(fsspec where pyarrow has no file system for a scheme).

Credentials and endpoints come from FileIO properties, named as Iceberg and PyIceberg name them
(``s3.endpoint``, ``s3.access-key-id``, ``gcs.oauth2.token``, ``adls.account-key``, ``hdfs.user``, ...):
a catalog passes its own and the ones it vends per table; anything missing falls back to the
environment (``AWS_*``, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_*``) as each SDK does.

Errors are one line naming the location, and for object stores the bucket and key.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.fs as pafs

from icebook.errors import EnvironmentProblem, IcebookError, NotFound, StorageError, UnsupportedFeature, one_line

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
GCS_SCHEMES = frozenset({"gs", "gcs"})
AZURE_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
HDFS_SCHEMES = frozenset({"hdfs", "viewfs"})
NATIVE_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "hdfs", "viewfs", "file")


@dataclass(frozen=True, slots=True)
class Location:
    """A table location split the way file systems need it."""

    scheme: str
    """Lower-case URI scheme; empty for a local path."""
    authority: str
    """Bucket (s3, gs), ``container@account...`` (abfs), ``namenode:port`` (hdfs); empty for local."""
    key: str
    """The path inside the authority, without a leading slash (local: the absolute path)."""

    @property
    def bucket(self) -> str:
        return self.authority.split("@", 1)[0]


def split_location(location: str) -> Location:
    """``s3a://bucket/a/b`` -> (``s3a``, ``bucket``, ``a/b``); a plain path -> local."""
    if location.startswith("file:"):
        parsed = urlparse(location)
        return Location(scheme="", authority="", key=parsed.path or location[len("file:") :])
    if "://" not in location:
        return Location(scheme="", authority="", key=os.path.abspath(location))
    scheme, rest = location.split("://", 1)
    authority, _, key = rest.partition("/")
    return Location(scheme=scheme.lower(), authority=authority, key=key)


def _first(props: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = props.get(name)
        if value not in (None, ""):
            return value
    return None


def truthy(value: str | None) -> bool:
    """A FileIO property's boolean, as Iceberg's FileIOs read one (``true``, ``1``, ``yes``, ``on``)."""
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _copy_set(props: Mapping[str, str], opts: dict[str, Any], names: Mapping[str, str]) -> None:
    """Pass each property that is set (``names``: property -> keyword argument) through as written."""
    for prop, arg in names.items():
        value = _first(props, prop)
        if value:
            opts[arg] = value


def _endpoint(url: str) -> tuple[str, str]:
    """``http://127.0.0.1:9000`` -> (``127.0.0.1:9000``, ``http``)."""
    if "://" in url:
        scheme, rest = url.split("://", 1)
        return rest.rstrip("/"), scheme
    return url.rstrip("/"), "https"


def s3_options(props: Mapping[str, str], bucket: str) -> dict[str, Any]:
    """``pyarrow.fs.S3FileSystem`` keyword arguments from Iceberg's S3 FileIO properties."""
    opts: dict[str, Any] = {}
    endpoint = (
        _first(props, "s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    )
    if endpoint:
        opts["endpoint_override"], opts["scheme"] = _endpoint(endpoint)
    key = _first(props, "s3.access-key-id", "client.access-key-id")
    secret = _first(props, "s3.secret-access-key", "client.secret-access-key")
    if key and secret:
        opts["access_key"], opts["secret_key"] = key, secret
        token = _first(props, "s3.session-token", "client.session-token")
        if token:
            opts["session_token"] = token
    if truthy(_first(props, "s3.anonymous")):
        opts["anonymous"] = True
    region = _first(props, "s3.region", "client.region") or os.environ.get("AWS_REGION")
    region = region or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        opts["region"] = region
    elif not endpoint and bucket:
        with contextlib.suppress(OSError):  # the request itself will say what is wrong
            opts["region"] = pafs.resolve_s3_region(bucket)
    role = _first(props, "s3.role-arn", "client.role-arn")
    if role:
        opts["role_arn"] = role
        session = _first(props, "s3.role-session-name", "client.role-session-name")
        if session:
            opts["session_name"] = session
    _copy_set(props, opts, {"s3.proxy-uri": "proxy_options"})
    for prop, arg in (("s3.connect-timeout", "connect_timeout"), ("s3.request-timeout", "request_timeout")):
        value = _first(props, prop)
        if value:
            opts[arg] = float(value)
    if truthy(_first(props, "s3.force-virtual-addressing")):
        opts["force_virtual_addressing"] = True
    return opts


def gcs_options(props: Mapping[str, str]) -> dict[str, Any]:
    """``pyarrow.fs.GcsFileSystem`` keyword arguments from Iceberg's GCS FileIO properties."""
    import datetime as _dt

    opts: dict[str, Any] = {}
    token = _first(props, "gcs.oauth2.token")
    if truthy(_first(props, "gcs.no-auth")) or truthy(_first(props, "gcs.anonymous")):
        opts["anonymous"] = True  # pyarrow refuses a token beside it
    elif token:
        opts["access_token"] = token
        expires = _first(props, "gcs.oauth2.token-expires-at")
        if expires:
            opts["credential_token_expiration"] = _dt.datetime.fromtimestamp(int(expires) / 1000, _dt.UTC)
    endpoint = _first(props, "gcs.service.host", "gcs.endpoint")
    if endpoint:
        opts["endpoint_override"], opts["scheme"] = _endpoint(endpoint)
    _copy_set(props, opts, {"gcs.project-id": "project_id", "gcs.default-bucket-location": "default_bucket_location"})
    return opts


def azure_connection_string(text: str) -> dict[str, str]:
    """An Azure connection string's fields (``AccountName``, ``AccountKey``, ``BlobEndpoint``,
    ``SharedAccessSignature`` ...); an endpoint URL alone (the Java FileIO's per-account form) is
    its ``BlobEndpoint``."""
    if text.startswith(("http://", "https://")):
        return {"BlobEndpoint": text}
    return {k.strip(): unquote(v.strip()) for k, _, v in (p.partition("=") for p in text.split(";")) if k.strip()}


def _azure_endpoint(url: str, account: str) -> tuple[str, str]:
    """A blob endpoint URL as pyarrow's (authority, scheme): an account's own host
    (``https://acct.blob.core.windows.net``) keeps the domain after the account (``.blob.core.windows.net``);
    an emulator's (``http://127.0.0.1:10000/acct``) is its host, which pyarrow follows with the account."""
    parsed = urlparse(url)
    host = parsed.netloc
    authority = host[len(account) :] if host.startswith(f"{account}.") else host
    return authority, parsed.scheme or "https"


def azure_options(props: Mapping[str, str], authority: str) -> dict[str, Any]:
    """``pyarrow.fs.AzureFileSystem`` keyword arguments: the account comes from
    ``container@account.dfs.core.windows.net`` (or ``adls.account-name``, or the connection string)."""
    _, _, host = authority.partition("@")
    connection = azure_connection_string(
        _first(props, "adls.connection-string", f"adls.connection-string.{host}") or ""
    )
    account = (
        _first(props, "adls.account-name")
        or host.split(".", 1)[0]
        or connection.get("AccountName")
        or os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
    )
    if not account:
        raise StorageError(f"abfs location {authority!r} names no storage account (expected container@account...)")
    opts: dict[str, Any] = {"account_name": account}
    key = _first(props, "adls.account-key") or _first(props, f"adls.account-key.{host}") or connection.get("AccountKey")
    if key:
        opts["account_key"] = key
    sas = (
        _first(props, "adls.sas-token")
        or _first(props, f"adls.sas-token.{host}")
        or connection.get("SharedAccessSignature")
    )
    if sas:
        opts["sas_token"] = sas
    endpoint = connection.get("BlobEndpoint") or connection.get("DfsEndpoint")
    if endpoint:  # Azure's SDKs reach both services through the blob endpoint of a connection string
        authority_, scheme = _azure_endpoint(endpoint, account)
        opts["blob_storage_authority"] = opts["dfs_storage_authority"] = authority_
        opts["blob_storage_scheme"] = opts["dfs_storage_scheme"] = scheme
    account_host = _first(props, "adls.account-host")
    if account_host:
        endpoint, scheme = _endpoint(account_host)
        opts["blob_storage_authority"] = opts["dfs_storage_authority"] = endpoint
        opts["blob_storage_scheme"] = opts["dfs_storage_scheme"] = scheme
    # the service principal, and PyIceberg's names for each endpoint on its own (Azurite: blob only)
    _copy_set(
        props,
        opts,
        {
            "adls.tenant-id": "tenant_id",
            "adls.client-id": "client_id",
            "adls.client-secret": "client_secret",
            "adls.blob-storage-authority": "blob_storage_authority",
            "adls.dfs-storage-authority": "dfs_storage_authority",
            "adls.blob-storage-scheme": "blob_storage_scheme",
            "adls.dfs-storage-scheme": "dfs_storage_scheme",
        },
    )
    return opts


def hdfs_options(props: Mapping[str, str], authority: str) -> dict[str, Any]:
    """``pyarrow.fs.HadoopFileSystem`` keyword arguments for namenode ``authority``."""
    host, _, port = authority.partition(":")
    opts: dict[str, Any] = {"host": _first(props, "hdfs.host") or host or "default"}
    port_value = _first(props, "hdfs.port") or port
    opts["port"] = int(port_value) if port_value else 0
    _copy_set(props, opts, {"hdfs.user": "user", "hdfs.kerberos_ticket": "kerb_ticket"})
    return opts


def _construct(factory: Callable[..., pafs.FileSystem], opts: dict[str, Any], scheme: str) -> pafs.FileSystem:
    try:
        return factory(**opts)
    except TypeError as exc:  # an option this pyarrow release does not know
        raise StorageError(f"cannot open {scheme}:// storage with this pyarrow: {_one_line(exc)}") from None


class Filesystems:
    """One file system per (scheme, authority), built from FileIO properties on first use."""

    def __init__(self, properties: Mapping[str, Any] | None = None) -> None:
        self.properties: dict[str, str] = {k: v for k, v in (properties or {}).items() if isinstance(v, str)}
        self._cache: dict[tuple[str, str], pafs.FileSystem] = {}
        self._lock = threading.Lock()

    def resolve(self, location: str) -> tuple[pafs.FileSystem, str]:
        """The file system holding ``location`` and the path to give it."""
        loc = split_location(location)
        if not loc.scheme:
            return self._get(("", ""), pafs.LocalFileSystem), loc.key
        cache_key = (_family(loc.scheme), loc.authority)
        if loc.scheme in S3_SCHEMES:
            return self._get(cache_key, lambda: self._s3(loc)), f"{loc.bucket}/{loc.key}".rstrip("/")
        if loc.scheme in GCS_SCHEMES:
            return self._get(cache_key, self._gcs), f"{loc.bucket}/{loc.key}".rstrip("/")
        if loc.scheme in AZURE_SCHEMES:
            return self._get(cache_key, lambda: self._azure(loc)), f"{loc.bucket}/{loc.key}".rstrip("/")
        if loc.scheme in HDFS_SCHEMES:
            return self._get(cache_key, lambda: self._hdfs(loc)), "/" + loc.key
        return self._get(cache_key, lambda: self._fsspec(loc, location)), location.split("://", 1)[1]

    def _get(self, key: tuple[str, str], make: Callable[[], pafs.FileSystem]) -> pafs.FileSystem:
        with self._lock:
            fs = self._cache.get(key)
            if fs is None:
                fs = self._cache[key] = make()
            return fs

    def _s3(self, loc: Location) -> pafs.FileSystem:
        return _construct(pafs.S3FileSystem, s3_options(self.properties, loc.bucket), loc.scheme)

    def _gcs(self) -> pafs.FileSystem:
        return _construct(pafs.GcsFileSystem, gcs_options(self.properties), "gs")

    def _azure(self, loc: Location) -> pafs.FileSystem:
        opts = azure_options(self.properties, loc.authority)
        azure = getattr(pafs, "AzureFileSystem", None)
        if azure is not None:
            try:
                return azure(**opts)
            except (TypeError, OSError, NotImplementedError):
                pass  # this pyarrow build lacks Azure support or an option: try adlfs below
        return _fsspec_filesystem(loc.scheme, f"{loc.scheme}://{loc.authority}/{loc.key}", _adlfs_options(opts))

    def _hdfs(self, loc: Location) -> pafs.FileSystem:
        opts = hdfs_options(self.properties, loc.authority)
        try:
            return pafs.HadoopFileSystem(**opts)
        except OSError as exc:
            raise StorageError(
                f"cannot connect to HDFS namenode {loc.authority or opts['host']!r}: {_one_line(exc)} "
                "(pyarrow needs libhdfs: set HADOOP_HOME, JAVA_HOME and CLASSPATH=$(hadoop classpath --glob))"
            ) from None

    def _fsspec(self, loc: Location, location: str) -> pafs.FileSystem:
        prefix = f"{loc.scheme}."
        options = {k[len(prefix) :]: v for k, v in self.properties.items() if k.startswith(prefix)}
        return _fsspec_filesystem(loc.scheme, location, options)


def _family(scheme: str) -> str:
    for family in (S3_SCHEMES, GCS_SCHEMES, AZURE_SCHEMES, HDFS_SCHEMES):
        if scheme in family:
            return min(family)
    return scheme


def _adlfs_options(opts: dict[str, Any]) -> dict[str, Any]:
    names = {"account_name": "account_name", "account_key": "account_key", "sas_token": "sas_token"}
    names |= {"tenant_id": "tenant_id", "client_id": "client_id", "client_secret": "client_secret"}
    return {names[k]: v for k, v in opts.items() if k in names}


def _fsspec_filesystem(scheme: str, location: str, options: Mapping[str, Any]) -> pafs.FileSystem:
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise EnvironmentProblem(f"no filesystem for '{scheme}://' (in {location}): fsspec is not installed") from None
    try:
        fs = fsspec.filesystem(scheme, **options)
    except (ImportError, ValueError) as exc:
        if scheme in known_implementations:  # fsspec knows the scheme; its driver package is missing
            hint = known_implementations[scheme].get("err", "")
            raise EnvironmentProblem(
                f"no filesystem for '{scheme}://' (in {location}): {hint or _one_line(exc)}"
            ) from None
        raise UnsupportedFeature(
            f"no filesystem for '{scheme}://' (in {location}): icebook reads "
            f"{', '.join(s + '://' for s in NATIVE_SCHEMES)} and any scheme an installed fsspec package registers"
        ) from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs))


_REQUEST_ID = re.compile(r"\s*\(Request ID:[^)]*\)?")


def _one_line(exc: BaseException) -> str:
    """The exception as one line (``errors.one_line``), without AWS request ids."""
    return _REQUEST_ID.sub("", one_line(exc)).strip()


_DENIED = ("ACCESS_DENIED", "SIGNATURE_DOES_NOT_MATCH", "INVALID_ACCESS_KEY_ID", "Forbidden", "403", "EXPIRED_TOKEN")


@contextmanager
def storage_errors(fs: pafs.FileSystem, location: str, action: str = "read") -> Iterator[None]:
    """Turn a file system's exception into one line naming the file (and bucket and key)."""
    try:
        yield
    except IcebookError:
        raise
    except (FileNotFoundError, IsADirectoryError):
        raise not_found(fs, location) from None
    except OSError as exc:
        text = _one_line(exc)
        loc = split_location(location)
        where = f"{location} (bucket {loc.bucket!r}, key {loc.key!r})" if loc.authority else location
        if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
            raise NotFound(f"cannot {action} {where}: bucket {loc.bucket!r} does not exist") from None
        if any(mark in text for mark in _DENIED):
            raise StorageError(f"cannot {action} {where}: access denied; check the credentials ({text})") from None
        if "not found" in text.lower() or "no such file" in text.lower() or "does not exist" in text.lower():
            raise not_found(fs, location) from None
        raise StorageError(f"cannot {action} {where}: {text}") from None


def not_found(fs: pafs.FileSystem, location: str, *, what: str = "file") -> NotFound:
    """NotFound for ``location``; on object stores it says whether the bucket itself is missing."""
    loc = split_location(location)
    if loc.authority and loc.scheme in S3_SCHEMES | GCS_SCHEMES | AZURE_SCHEMES:
        try:
            missing_bucket = fs.get_file_info(loc.bucket).type == pafs.FileType.NotFound
        except OSError:
            missing_bucket = False
        if missing_bucket:
            return NotFound(f"{what} not found: {location}: bucket {loc.bucket!r} does not exist (key {loc.key!r})")
        return NotFound(f"{what} not found: {location} (bucket {loc.bucket!r}, key {loc.key!r})")
    return NotFound(f"{what} not found: {location}")


__all__ = [
    "NATIVE_SCHEMES",
    "Filesystems",
    "Location",
    "StorageError",
    "not_found",
    "split_location",
    "storage_errors",
]
