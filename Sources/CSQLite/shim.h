#ifndef COUNTERPOINT_CSQLITE_SHIM_H
#define COUNTERPOINT_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type counterpoint_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// SQLITE_STATIC likewise: the bound buffer outlives the statement step.
static inline sqlite3_destructor_type counterpoint_sqlite_static(void) {
    return SQLITE_STATIC;
}
#endif
