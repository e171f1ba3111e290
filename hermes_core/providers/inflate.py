"""A compressed body's bytes inflated in bounded pieces, as the HTTP client reads them.

The stream watch (:mod:`.watch`) reads a gzip, deflate, br or zstd body inflated: an event
stream's lines are watched as the SDK will read them, a whole answer is read through every gzip
member (the client stops at the first), and the budgets are checked between pieces of at most
64 KB (a few KB of a compressed body inflate to gigabytes). Apart from the watch because it is
its own job: which codings the client decodes, and how each is inflated without a bomb's cost.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx2
from httpx2._decoders import SUPPORTED_DECODERS, ContentDecoder, MultiDecoder

__all__ = ["SUPPORTED_DECODERS", "Decoded", "Inflater", "inflater", "undecodable"]


#: The most bytes the watch inflates at once, as the HTTP client bounds its own pieces: a small
#: compressed chunk can inflate a thousandfold (a decompression bomb).
_PIECE = 64 * 1024
#: The most compressed bytes a br/zstd decoder is handed at once (the budgets checked between):
#: each feed is a call of the decoder; 1 KB feeds cost a large body ~1.3x its decoding CPU, 4 KB
#: ~1.07x, and 4 KB of empty zstd frames are still milliseconds of it.
_FED = 4 * 1024
#: Compressed bytes that inflate to nothing past which a br/zstd body is not what it says.
_NOTHING = 256 * 1024
#: How a gzip member begins.
_GZIP_MAGIC = b"\x1f\x8b"



class Inflater:
    """A gzip or deflate body's bytes inflated in bounded pieces, as the HTTP client reads them:
    ``deflate`` zlib-wrapped or, when its first chunk is not, raw (servers send both). A gzip body
    is read through every member, as gzip(1) reads a file: the HTTP client stops at the first
    member's end, and a proxy that compresses what it relays piece by piece sends one member per
    piece (the rest of the stream was lost). Bytes after a member that begin no other (zero
    padding, garbage) are ignored, as before."""

    def __init__(self, encoding: str) -> None:
        self.name = encoding
        self._deflate = encoding == "deflate"
        self._first = True
        self._past_end = False   # bytes past the last member came: the rest is ignored
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else 16 + zlib.MAX_WBITS)

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        if self._past_end:
            return
        first, self._first = self._first, self._first and not chunk
        try:
            piece = self._zlib.decompress(chunk, _PIECE)
        except zlib.error:
            if not (first and self._deflate):
                raise
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            piece = self._zlib.decompress(chunk, _PIECE)
        while True:
            while piece:
                yield piece
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, _PIECE)
            # the common case, a member still open, decided without a call
            if not self._zlib.eof or (member := self._next_member()) is None:
                return
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
            piece = self._zlib.decompress(member, _PIECE)

    def _next_member(self) -> bytes | None:
        """The next gzip member's first bytes, once the one read has ended and they begin with
        the gzip magic; None until then (the bytes after an ended member, which zlib keeps as
        ``unused_data`` and adds each later chunk to, may be a magic's first byte alone). A
        deflate body has one stream: all that follows its end is past it (zlib would keep it all)."""
        if not self._zlib.eof:
            return None
        rest = self._zlib.unused_data
        if rest.startswith(_GZIP_MAGIC) and not self._deflate:
            return rest
        if self._deflate or not _GZIP_MAGIC.startswith(rest):
            self._past_end = True
        return None

    def flush(self) -> bytes:
        """The last inflated bytes, once the body has ended."""
        return self._zlib.flush()


class Decoded:
    """A brotli or zstd body, or one in several codings, inflated by the HTTP client's own
    decoder (br and zstd present when their optional codecs are installed), in its bounded
    pieces (a megabyte at most) sliced to :data:`_PIECE`: a few KB inflate to gigabytes, and
    the budgets are checked before each slice, as for gzip. Its errors are the client's
    (``DecodingError``).

    The decoder is handed :data:`_FED` bytes at a time, and an empty piece passes after each
    feed that gave nothing (the watch checks the budgets at it): a zstd frame costs its decoder
    a new context (~26 us), so a 64 KB chunk of empty frames took it ~0.26 s with no check. A
    body :data:`_NOTHING` bytes long that inflates to nothing is no compressor's (a zstd block
    holds at most 128 KB): a ``DecodingError``, not seconds of CPU until the budget ends it."""

    def __init__(self, encoding: str, decoder: ContentDecoder) -> None:
        self.name = encoding
        self._decoder = decoder
        self._barren = 0   # bytes fed since the last that inflated to something

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        for at in range(0, len(chunk) or 1, _FED):   # an empty chunk is fed too, as before
            fed = chunk[at:at + _FED]
            gave = False
            for piece in self._decoder.decode(fed):
                gave = gave or bool(piece)
                if len(piece) <= _PIECE:
                    yield piece
                else:
                    for cut in range(0, len(piece), _PIECE):
                        yield piece[cut:cut + _PIECE]
            if gave:
                self._barren = 0
                continue
            self._barren += len(fed)
            if self._barren > _NOTHING:
                raise httpx2.DecodingError(
                    f"the {self.name} body inflates to nothing in {self._barren} bytes")
            yield b""

    def flush(self) -> bytes:
        """The last bytes, once the body has ended (a truncated zstd frame raises)."""
        return b"".join(self._decoder.flush())


def undecodable(inflate: Inflater | Decoded, e: zlib.error) -> httpx2.DecodingError:
    """What the HTTP client raises for a body that is not the encoding it is labelled with."""
    return httpx2.DecodingError(f"the {inflate.name} body does not inflate ({e})")


def inflater(encoding: str) -> Inflater | Decoded | None:
    """The inflater for a body sent with ``content-encoding`` ``encoding``: gzip or deflate (what
    zlib reads), or another one coding the HTTP client decodes (br, zstd: when their optional
    codecs are installed, which is also when the client asks for them), or several of those (the
    client's decoders, last applied first); a listed coding the client does not know it skips,
    and so does the watch; else None: the watch reads such chunks as they come (a coding the
    client passes on as it is)."""
    encoding = encoding.strip().lower()
    codings = ["gzip"] if encoding == "x-gzip" else [
        c for c in (c.strip() for c in encoding.split(",")) if c in SUPPORTED_DECODERS and c != "identity"]
    if codings in (["gzip"], ["deflate"]):   # "gzip", "identity, gzip", "x-unknown, gzip"
        return Inflater(codings[0])
    if not 0 < len(codings) <= MultiDecoder.max_decode_links:
        return None
    # one coding or several, through the client's own decoders: left to the client, a body in
    # two gzip layers would inflate past every cap, only its compressed bytes counted
    return Decoded(encoding if len(codings) > 1 else codings[0], MultiDecoder(codings))
