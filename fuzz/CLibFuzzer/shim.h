// libFuzzer's driver, which `-sanitize=fuzzer` links in. The fuzz targets call it from their own
// `main` (SwiftPM gives every executable one), instead of relying on libFuzzer's, which it hides.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
