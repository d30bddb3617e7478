#ifndef COUNTERPOINT_CMICROHTTPD_SHIM_H
#define COUNTERPOINT_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/*
 * Swift cannot call variadic C functions, so MHD_start_daemon and MHD_get_daemon_info are reached
 * through these wrappers. Options travel as an MHD_OptionItem array (MHD_OPTION_ARRAY); the
 * constructors below keep the function-pointer-to-intptr_t casts that the array form needs on the
 * C side, so the Swift side stays typed.
 */

static inline struct MHD_Daemon *cp_mhd_start_daemon(unsigned int flags, uint16_t port,
                                                     MHD_AccessHandlerCallback access_handler,
                                                     void *access_handler_cls,
                                                     const struct MHD_OptionItem *options) {
  /* The daemon binds to MHD_OPTION_SOCK_ADDR in `options`; `port`, the same port, only names it
     in libmicrohttpd's own messages ("Failed to bind to port N"). */
  return MHD_start_daemon(flags, port, NULL, NULL, access_handler, access_handler_cls,
                          MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* The port the daemon is bound to (the kernel's choice when asked for port 0); 0 if unknown. */
static inline uint16_t cp_mhd_bound_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

static inline struct MHD_OptionItem cp_mhd_option_value(enum MHD_OPTION option, intptr_t value) {
  struct MHD_OptionItem item = { option, value, NULL };
  return item;
}

static inline struct MHD_OptionItem cp_mhd_option_pointer(enum MHD_OPTION option, void *pointer) {
  struct MHD_OptionItem item = { option, 0, pointer };
  return item;
}

static inline struct MHD_OptionItem cp_mhd_option_end(void) {
  struct MHD_OptionItem item = { MHD_OPTION_END, 0, NULL };
  return item;
}

typedef void *(*cp_mhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);
typedef size_t (*cp_mhd_unescape_callback)(void *cls, struct MHD_Connection *connection, char *string);

static inline struct MHD_OptionItem cp_mhd_option_uri_log(cp_mhd_uri_log_callback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls };
  return item;
}

static inline struct MHD_OptionItem cp_mhd_option_notify_completed(MHD_RequestCompletedCallback callback,
                                                                   void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, cls };
  return item;
}

static inline struct MHD_OptionItem cp_mhd_option_unescape(cp_mhd_unescape_callback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)callback, cls };
  return item;
}

static inline struct MHD_OptionItem cp_mhd_option_external_logger(MHD_LogCallback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)callback, cls };
  return item;
}

#endif
