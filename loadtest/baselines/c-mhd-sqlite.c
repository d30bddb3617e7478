/*
 * The yardstick for Counterpoint's reader: the smallest sensible libmicrohttpd server that answers
 * one SQLite point lookup per request. The Swift reader should carry at least 0.8 of its rate.
 *
 *   gcc -O2 -o c-mhd-sqlite c-mhd-sqlite.c -lmicrohttpd -lsqlite3 -lpthread
 *   ./c-mhd-sqlite DB_PATH PORT [poll|epoll] [one|two-connections|two-subqueries SPLIT_HOUR]
 *
 * The fourth argument picks the lookup's shape (default `one`, the single statement below). The
 * other two split it at SPLIT_HOUR the way Counterpoint's two layers split a track's hours (the
 * batch file's hours before it, the realtime file's from it): `two-connections` sums the halves
 * with one statement on each of two connections, as `serve` does on its two SQLite files;
 * `two-subqueries` sums them in one statement of two subqueries on one connection. They measure
 * what the layers' shape costs, apart from the language (docs/performance.md).
 *
 * GET /v1/tracks/{id}/plays -> {"track_id":N,"plays":N}
 *   from SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?
 *   on counts(track_id INTEGER, hour INTEGER, plays INTEGER, PRIMARY KEY(track_id,hour)) WITHOUT ROWID.
 *
 * Thread pool of 2 (MHD_OPTION_THREAD_POOL_SIZE), one read-only connection and prepared statement per
 * pool thread (created lazily, kept in a pthread key), and the two-phase access handler: the response
 * is queued on the second call, after MHD has seen the whole request, so the connection stays alive.
 * Queueing on the first call made MHD close the connection after every response.
 *
 * Measuring (a database of 100,000 tracks x 48 hours, 4.8 M rows, 75 MB, WAL):
 *
 *   sqlite3 counts.db "PRAGMA journal_mode=WAL; CREATE TABLE counts(track_id INTEGER, hour INTEGER,
 *     plays INTEGER, PRIMARY KEY(track_id,hour)) WITHOUT ROWID; WITH RECURSIVE t(id) AS (SELECT 1 UNION
 *     ALL SELECT id+1 FROM t WHERE id<100000), h(hr) AS (SELECT 0 UNION ALL SELECT hr+1 FROM h WHERE
 *     hr<47) INSERT INTO counts SELECT id, 490000+hr, (id*7+hr*13)%50 FROM t, h ORDER BY 1,2;"
 *   wrk -t2 -c64 -d10s --latency -s random-id.lua http://127.0.0.1:PORT
 *
 * with random-id.lua:
 *
 *   local n = tonumber(os.getenv("TRACKS") or "100000")
 *   math.randomseed(os.time())
 *   request = function() return wrk.format("GET", "/v1/tracks/" .. math.random(1, n) .. "/plays") end
 *
 * Figures on the 2-core development machine (AMD EPYC, Debian 12), wrk on the same machine,
 * libmicrohttpd 0.9.75, SQLite 3.40. Other jobs shared the machine for most runs, so ranges are given;
 * "CPU/req" is the server's own CPU time per request, which varies less than the rate.
 *
 *                                  64 connections                  256 connections
 *   this server (idle, poll/epoll) 44-51 k req/s, p50 1.2-1.3 ms,  45-51 k req/s, p50 4.6-6.5 ms,
 *                                  p99 5.4-5.6 ms                  p99 14-23 ms
 *   this server (shared machine)   28-39 k req/s, p50 1.4-2.2 ms,  27-36 k req/s, p50 6.4-8.4 ms,
 *                                  p99 6-19 ms, 20-23 us CPU/req   p99 19-21 ms, 21-24 us CPU/req
 *   Swift HTTPServer, same handler 29-37 k req/s, p50 1.4-2.1 ms,  25-30 k req/s, p50 7.2-9.5 ms,
 *   (same runs, interleaved)       p99 6.5-20 ms, 23-25 us CPU/req p99 24-49 ms, 24-28 us CPU/req
 *   404 without SQLite, C          113 k req/s idle (p50 0.19 ms), 70 k req/s shared
 *   404 without SQLite, Swift      112 k req/s (quietest run, p50 0.46 ms, p99 2.3 ms), 74 k shared
 *
 * The SQLite point lookup (a 48-row range sum, random ids) costs about 10 us of CPU and halves the rate.
 * Keep-alive held in every run: wrk reported no socket errors and the kernel accepted one connection
 * per wrk connection (TcpPassiveOpens) for 100,000+ requests.
 *
 * Polling mode: with MHD_USE_EPOLL (`epoll` argument) the daemon stopped answering at 128 concurrent
 * connections (under 200 req/s, with a pool of 1 and, in one run, of 2); with poll() it served 100, 128
 * and 256 connections alike, so poll() is the default here and in HTTPServer.
 */
#include <microhttpd.h>
#include <sqlite3.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *database_path;
static pthread_key_t thread_state_key;
static int first_call_marker;

enum shape { ONE, TWO_CONNECTIONS, TWO_SUBQUERIES };
static enum shape lookup_shape = ONE;
static long long split_hour;

struct thread_state {
  sqlite3 *db;
  sqlite3_stmt *plays_of_track;
  sqlite3 *second_db;              /* TWO_CONNECTIONS only */
  sqlite3_stmt *second_plays;
};

static void free_thread_state(void *value) {
  struct thread_state *state = value;
  sqlite3_finalize(state->plays_of_track);
  sqlite3_finalize(state->second_plays);
  sqlite3_close(state->db);
  sqlite3_close(state->second_db);
  free(state);
}

/* Opens `*db` read-only and prepares `sql` on it, with SPLIT_HOUR bound as parameter 2. */
static int open_lookup(sqlite3 **db, sqlite3_stmt **statement, const char *sql) {
  if (sqlite3_open_v2(database_path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(*db, sql, -1, SQLITE_PREPARE_PERSISTENT, statement, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s: %s\n", database_path, sqlite3_errmsg(*db));
    return 0;
  }
  if (lookup_shape != ONE) sqlite3_bind_int64(*statement, 2, split_hour);
  return 1;
}

static struct thread_state *thread_state(void) {
  struct thread_state *state = pthread_getspecific(thread_state_key);
  if (state != NULL) return state;
  state = calloc(1, sizeof *state);
  if (state == NULL) return NULL;
  int opened = 0;
  switch (lookup_shape) {
  case ONE:
    opened = open_lookup(&state->db, &state->plays_of_track, "SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?1");
    break;
  case TWO_CONNECTIONS:
    opened = open_lookup(&state->db, &state->plays_of_track,
                         "SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?1 AND hour<?2") &&
             open_lookup(&state->second_db, &state->second_plays,
                         "SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?1 AND hour>=?2");
    break;
  case TWO_SUBQUERIES:
    opened = open_lookup(&state->db, &state->plays_of_track,
                         "SELECT (SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?1 AND hour<?2)"
                         " + (SELECT COALESCE(SUM(plays),0) FROM counts WHERE track_id=?1 AND hour>=?2)");
    break;
  }
  if (!opened) {
    free_thread_state(state);
    return NULL;
  }
  pthread_setspecific(thread_state_key, state);
  return state;
}

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned int status, const char *body) {
  struct MHD_Response *response =
      MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (response == NULL) return MHD_NO;
  MHD_add_response_header(response, "Content-Type", "application/json; charset=utf-8");
  enum MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

/* Parses "/v1/tracks/{id}/plays" with id in 1 ... 2^53-1; returns 0 when the path is anything else. */
static long long track_id_of_path(const char *url) {
  static const char prefix[] = "/v1/tracks/";
  static const char suffix[] = "/plays";
  if (strncmp(url, prefix, sizeof prefix - 1) != 0) return 0;
  const char *digits = url + sizeof prefix - 1;
  long long id = 0;
  const char *cursor = digits;
  while (*cursor >= '0' && *cursor <= '9') {
    if (cursor - digits >= 16) return 0;
    id = id * 10 + (*cursor - '0');
    cursor++;
  }
  if (cursor == digits || strcmp(cursor, suffix) != 0) return 0;
  return id <= 9007199254740991LL ? id : 0;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
  (void)cls; (void)version; (void)upload_data;
  if (*con_cls == NULL) { /* First call: headers only. Queueing now would cost the keep-alive. */
    *con_cls = &first_call_marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) { /* A body we do not want: discard it. */
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return respond(connection, 405, "{\"error\":{\"code\":\"method_not_allowed\"}}");
  long long track_id = track_id_of_path(url);
  if (track_id == 0) return respond(connection, 404, "{\"error\":{\"code\":\"not_found\"}}");
  struct thread_state *state = thread_state();
  if (state == NULL) return respond(connection, 503, "{\"error\":{\"code\":\"store_unavailable\"}}");

  sqlite3_stmt *statement = state->plays_of_track;
  sqlite3_bind_int64(statement, 1, track_id);
  long long plays = -1;
  if (sqlite3_step(statement) == SQLITE_ROW) plays = sqlite3_column_int64(statement, 0);
  sqlite3_reset(statement);
  if (plays >= 0 && state->second_plays != NULL) {
    sqlite3_bind_int64(state->second_plays, 1, track_id);
    if (sqlite3_step(state->second_plays) == SQLITE_ROW) plays += sqlite3_column_int64(state->second_plays, 0);
    else plays = -1;
    sqlite3_reset(state->second_plays);
  }
  if (plays < 0) return respond(connection, 503, "{\"error\":{\"code\":\"store_unavailable\"}}");

  char body[96];
  snprintf(body, sizeof body, "{\"track_id\":%lld,\"plays\":%lld}", track_id, plays);
  return respond(connection, 200, body);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DB_PATH PORT [poll|epoll] [one|two-connections|two-subqueries SPLIT_HOUR]\n", argv[0]);
    return 2;
  }
  if (argc > 4 && strcmp(argv[4], "one") != 0) {
    if (strcmp(argv[4], "two-connections") == 0) lookup_shape = TWO_CONNECTIONS;
    else if (strcmp(argv[4], "two-subqueries") == 0) lookup_shape = TWO_SUBQUERIES;
    else { fprintf(stderr, "unknown lookup shape %s\n", argv[4]); return 2; }
    if (argc < 6) { fprintf(stderr, "%s needs SPLIT_HOUR\n", argv[4]); return 2; }
    split_hour = atoll(argv[5]);
  }
  database_path = argv[1];
  int port = atoi(argv[2]);
  unsigned int polling = (argc > 3 && strcmp(argv[3], "epoll") == 0) ? MHD_USE_EPOLL : MHD_USE_POLL;
  signal(SIGPIPE, SIG_IGN);
  pthread_key_create(&thread_state_key, free_thread_state);

  struct MHD_Daemon *daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | polling | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
      answer, NULL,
      MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
      MHD_OPTION_END);
  if (daemon == NULL) {
    fprintf(stderr, "cannot start the daemon on port %d\n", port);
    return 1;
  }
  fprintf(stderr, "listening on port %d (%s)\n", port, polling == MHD_USE_EPOLL ? "epoll" : "poll");
  pause(); /* until a signal ends the process */
  MHD_stop_daemon(daemon);
  return 0;
}
