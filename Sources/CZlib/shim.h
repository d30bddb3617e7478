#ifndef COUNTERPOINT_CZLIB_SHIM_H
#define COUNTERPOINT_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 and deflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream) so that
// zlib can check the caller was compiled against a compatible header), which Swift cannot call.

/// inflateInit2(stream, windowBits).
static inline int cp_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

/// deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY).
static inline int cp_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}
#endif
