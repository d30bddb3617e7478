#ifndef COUNTERPOINT_CCRYPT_SHIM_H
#define COUNTERPOINT_CCRYPT_SHIM_H
/* libxcrypt (Debian's libcrypt): crypt_rn verifies the bcrypt hashes of htpasswd files. */
#include <crypt.h>
#endif
