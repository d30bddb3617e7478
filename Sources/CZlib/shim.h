#ifndef COUNTERPOINT_CZLIB_SHIM_H
#define COUNTERPOINT_CZLIB_SHIM_H
#include <zlib.h>
#endif
