#ifndef COUNTERPOINT_CRDKAFKA_SHIM_H
#define COUNTERPOINT_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#endif
