#ifndef COUNTERPOINT_CRDKAFKA_SHIM_H
#define COUNTERPOINT_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// rd_kafka_producev is variadic, which Swift cannot call: this fixes the argument list.
/// The payload and key are copied (RD_KAFKA_MSG_F_COPY), so the caller's buffers may be
/// reused as soon as this returns. A NULL value produces a tombstone. A zero timestamp
/// lets librdkafka stamp the message with the current time.
static inline rd_kafka_resp_err_t counterpoint_rd_kafka_produce(rd_kafka_t *rk,
                                                                rd_kafka_topic_t *topic,
                                                                const void *key, size_t key_size,
                                                                const void *value, size_t value_size,
                                                                int64_t timestamp_ms) {
        return rd_kafka_producev(rk,
                                 RD_KAFKA_V_RKT(topic),
                                 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                 RD_KAFKA_V_KEY(key, key_size),
                                 RD_KAFKA_V_VALUE((void *)value, value_size),
                                 RD_KAFKA_V_TIMESTAMP(timestamp_ms),
                                 RD_KAFKA_V_END);
}

/// rd_kafka_mock_broker_push_request_error_rtts is variadic: this pushes one (error, delay)
/// tuple onto a mock broker's stack for one request type.
static inline rd_kafka_resp_err_t counterpoint_rd_kafka_mock_push_error_rtt(rd_kafka_mock_cluster_t *cluster,
                                                                            int32_t broker_id,
                                                                            int16_t api_key,
                                                                            rd_kafka_resp_err_t error,
                                                                            int rtt_ms) {
        return rd_kafka_mock_broker_push_request_error_rtts(cluster, broker_id, api_key, 1, error, rtt_ms);
}
#endif
