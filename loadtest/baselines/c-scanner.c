/*
 * c-scanner: the yardstick for Counterpoint's batch job.
 *
 * Reads NDJSON event logs, validates every line against docs/event-format.md (a complete JSON
 * validation, with the same reason codes and the same decisions as the Swift
 * EventParser), de-duplicates valid events by event_id within their UTC hour, and counts
 * plays per (track_id, hour). Single-threaded, libc only:
 *
 *     gcc -O2 -o c-scanner c-scanner.c && ./c-scanner [--validate-only] events.ndjson [more.ndjson ...]
 *
 * --validate-only stops after validation (no de-duplication, no counting): the figure to
 * hold a parser alone against. --reasons prints, instead of the summary, one line per
 * input line: "ok" or its reason code, to diff against another implementation.
 * Prints one summary line, then the rejections by reason:
 *     events=N valid=N duplicates=N rejected=N keys=N seconds=S events_per_sec=R checksum=C
 * where checksum = sum over (track, hour) keys of (track_id*31 + hour_index) * plays
 * (uint64, wrapping), so that two implementations can be compared on the same files.
 * `events` counts every line, blank ones included (they are rejected as `empty`); a
 * final line without '\n' counts too.
 *
 * It is meant to be honest, not sandbagged: strings are scanned eight bytes at a time,
 * keys are matched by whole words, both hash tables use open addressing with linear
 * probing, and files are read in large blocks with no per-line copy.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- reasons */

enum reason {
    OK = 0, MALFORMED_JSON, MISSING_FIELD, INVALID_FIELD, UNSUPPORTED_TYPE, TOO_LARGE, INVALID_UTF8, EMPTY,
    REASON_COUNT
};
static const char *const reason_names[REASON_COUNT] = {
    "ok", "malformed_json", "missing_field", "invalid_field", "unsupported_type", "too_large", "invalid_utf8", "empty",
};

#define MAX_EVENT_BYTES (64 * 1024)
#define MAX_DEPTH 64
#define MAX_TRACK_ID 9007199254740991LL
#define EARLIEST_MS 946684800000LL  /* 2000-01-01T00:00:00Z, inclusive */
#define LATEST_MS 4102444800000LL   /* 2100-01-01T00:00:00Z, exclusive */

/* ---------------------------------------------------------------- scanner */

/* Syntax faults unwind by return value: every scanning function returns OK or the reason. */
typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} scanner;

static inline uint64_t load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static inline void skip_ws(scanner *s) {
    while (s->p < s->end) {
        uint8_t c = *s->p;
        if (c > 0x20) return;
        if (c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09) return;
        s->p++;
    }
}

static inline int cur(const scanner *s) { return s->p < s->end ? *s->p : 0; }

/* Length of the well-formed UTF-8 sequence (2-4 bytes) at p, or 0. */
static int utf8_length(const uint8_t *p, const uint8_t *end) {
    uint8_t lead = p[0], lo = 0x80, hi = 0xBF;
    int len;
    if (lead >= 0xC2 && lead <= 0xDF) len = 2;
    else if (lead == 0xE0) { len = 3; lo = 0xA0; }
    else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) len = 3;
    else if (lead == 0xED) { len = 3; hi = 0x9F; }
    else if (lead == 0xF0) { len = 4; lo = 0x90; }
    else if (lead >= 0xF1 && lead <= 0xF3) len = 4;
    else if (lead == 0xF4) { len = 4; hi = 0x8F; }
    else return 0;
    if (end - p < len) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < len; i++) if ((p[i] & 0xC0) != 0x80) return 0;
    return len;
}

/* A fault at the cursor: invalid_utf8 if the bytes there are not UTF-8, else malformed_json. */
static int fault(const scanner *s) {
    if (s->p < s->end && *s->p >= 0x80 && !utf8_length(s->p, s->end)) return INVALID_UTF8;
    return MALFORMED_JSON;
}

static int hex4(const uint8_t *p, const uint8_t *end, uint32_t *out) {
    if (end - p < 4) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v << 4 | d;
    }
    *out = v;
    return 1;
}

static int scan_escape(scanner *s) {
    if (s->end - s->p < 2) { s->p = s->end; return MALFORMED_JSON; }
    switch (s->p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        s->p += 2;
        return OK;
    case 'u': {
        uint32_t unit, low;
        if (!hex4(s->p + 2, s->end, &unit)) return MALFORMED_JSON;
        if (unit >= 0xDC00 && unit <= 0xDFFF) return MALFORMED_JSON;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            if (s->end - s->p < 12 || s->p[6] != '\\' || s->p[7] != 'u' || !hex4(s->p + 8, s->end, &low)
                || low < 0xDC00 || low > 0xDFFF) return MALFORMED_JSON;
            s->p += 12;
        } else {
            s->p += 6;
        }
        return OK;
    }
    default:
        return MALFORMED_JSON;
    }
}

/* High bit in each lane holding '"', '\\', a control character or a non-ASCII byte. */
static inline uint64_t special_bytes(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * 0x22), b = w ^ (ones * 0x5C);
    return (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & high;
}

/* Scans a string whose opening quote is behind the cursor; leaves the cursor past the
 * closing quote. *escaped tells whether the raw bytes differ from the value. */
static inline int scan_string(scanner *s, int *escaped) {
    *escaped = 0;
    for (;;) {
        while (s->end - s->p >= 8) {
            uint64_t m = special_bytes(load64(s->p));
            if (!m) { s->p += 8; continue; }
            s->p += __builtin_ctzll(m) >> 3;
            break;
        }
        if (s->p >= s->end) return MALFORMED_JSON;
        uint8_t c = *s->p;
        if (c == '"') { s->p++; return OK; }
        if (c == '\\') { int r = scan_escape(s); if (r) return r; *escaped = 1; }
        else if (c < 0x20) return MALFORMED_JSON;
        else if (c >= 0x80) { int n = utf8_length(s->p, s->end); if (!n) return INVALID_UTF8; s->p += n; }
        else s->p++;
    }
}

/* Appends the UTF-8 encoding of scalar to out. */
static size_t put_utf8(uint8_t *out, uint32_t c) {
    if (c < 0x80) { out[0] = c; return 1; }
    if (c < 0x800) { out[0] = 0xC0 | c >> 6; out[1] = 0x80 | (c & 0x3F); return 2; }
    if (c < 0x10000) { out[0] = 0xE0 | c >> 12; out[1] = 0x80 | (c >> 6 & 0x3F); out[2] = 0x80 | (c & 0x3F); return 3; }
    out[0] = 0xF0 | c >> 18; out[1] = 0x80 | (c >> 12 & 0x3F); out[2] = 0x80 | (c >> 6 & 0x3F); out[3] = 0x80 | (c & 0x3F);
    return 4;
}

/* Decodes a validated string body [p, end) into out (at most end - p bytes); returns the length. */
static size_t decode_string(const uint8_t *p, const uint8_t *end, uint8_t *out) {
    size_t n = 0;
    while (p < end) {
        if (*p != '\\') { out[n++] = *p++; continue; }
        uint8_t e = p[1];
        p += 2;
        switch (e) {
        case 'b': out[n++] = 8; break;
        case 'f': out[n++] = 12; break;
        case 'n': out[n++] = 10; break;
        case 'r': out[n++] = 13; break;
        case 't': out[n++] = 9; break;
        case 'u': {
            uint32_t c, low;
            hex4(p, end, &c);
            p += 4;
            if (c >= 0xD800 && c <= 0xDBFF) { hex4(p + 2, end, &low); c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00); p += 6; }
            n += put_utf8(out + n, c);
            break;
        }
        default: out[n++] = e;
        }
    }
    return n;
}

/* Scans a number by the JSON grammar. *is_int tells whether it is an integer written
 * without fraction or exponent that fits in int64 (then *value holds it). */
static inline int scan_number(scanner *s, int *is_int, int64_t *value) {
    int neg = *s->p == '-';
    if (neg) s->p++;
    const uint8_t *digits = s->p;
    if (s->p >= s->end || (uint8_t)(*s->p - '0') >= 10) return MALFORMED_JSON;
    uint64_t mag = 0;
    if (*s->p == '0') s->p++;
    else while (s->p < s->end && (uint8_t)(*s->p - '0') < 10) mag = mag * 10 + (*s->p++ - '0');
    long ndigits = s->p - digits;
    *is_int = 1;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        const uint8_t *f = s->p;
        while (s->p < s->end && (uint8_t)(*s->p - '0') < 10) s->p++;
        if (s->p == f) return MALFORMED_JSON;
        *is_int = 0;
    }
    if (s->p < s->end && (*s->p | 0x20) == 'e') {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
        const uint8_t *f = s->p;
        while (s->p < s->end && (uint8_t)(*s->p - '0') < 10) s->p++;
        if (s->p == f) return MALFORMED_JSON;
        *is_int = 0;
    }
    if (!*is_int) return OK;
    if (ndigits > 18) {
        mag = 0;
        for (const uint8_t *d = digits; d < digits + ndigits; d++) {
            if (__builtin_mul_overflow(mag, 10, &mag) || __builtin_add_overflow(mag, (uint64_t)(*d - '0'), &mag)) {
                *is_int = 0;
                return OK;
            }
        }
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) *is_int = 0;
        else *value = (int64_t)(0 - mag);
    } else {
        if (mag > (uint64_t)INT64_MAX) *is_int = 0;
        else *value = (int64_t)mag;
    }
    return OK;
}

static int expect_literal(scanner *s, const char *lit, int len) {
    if (s->end - s->p < len) return MALFORMED_JSON;
    for (int i = 0; i < len; i++) if (s->p[i] != (uint8_t)lit[i]) { s->p += i; return fault(s); }
    s->p += len;
    return OK;
}

static int skip_value(scanner *s, int depth);

static int skip_container(scanner *s, int depth, int object) {
    if (depth > MAX_DEPTH) return MALFORMED_JSON;
    uint8_t close = object ? '}' : ']';
    int r, esc;
    s->p++;
    skip_ws(s);
    if (cur(s) == close) { s->p++; return OK; }
    for (;;) {
        if (object) {
            if (cur(s) != '"') return fault(s);
            s->p++;
            if ((r = scan_string(s, &esc))) return r;
            skip_ws(s);
            if (cur(s) != ':') return fault(s);
            s->p++;
            skip_ws(s);
        }
        if ((r = skip_value(s, depth))) return r;
        skip_ws(s);
        int c = cur(s);
        if (c == ',') { s->p++; skip_ws(s); continue; }
        if (c == close) { s->p++; return OK; }
        return fault(s);
    }
}

static int skip_value(scanner *s, int depth) {
    int esc, is_int;
    int64_t v;
    switch (cur(s)) {
    case '"': s->p++; return scan_string(s, &esc);
    case '{': return skip_container(s, depth + 1, 1);
    case '[': return skip_container(s, depth + 1, 0);
    case 't': return expect_literal(s, "true", 4);
    case 'f': return expect_literal(s, "false", 5);
    case 'n': return expect_literal(s, "null", 4);
    case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        return scan_number(s, &is_int, &v);
    default: return fault(s);
    }
}

/* ---------------------------------------------------------------- timestamps */

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int64_t m) {
    static const int days[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return days[m];
}

/* RFC 3339 UTC (Z or +00:00, T/t, z, optional fraction truncated to ms) -> epoch ms. */
static int parse_timestamp(const uint8_t *b, size_t n, int64_t *out) {
    if (n < 20) return 0;
#define D(i) ((uint8_t)(b[i] - '0') < 10)
#define V(i) ((int64_t)(b[i] - '0'))
    if (!(D(0) && D(1) && D(2) && D(3) && b[4] == '-' && D(5) && D(6) && b[7] == '-' && D(8) && D(9)
          && (b[10] | 0x20) == 't' && D(11) && D(12) && b[13] == ':' && D(14) && D(15) && b[16] == ':'
          && D(17) && D(18))) return 0;
    int64_t year = V(0) * 1000 + V(1) * 100 + V(2) * 10 + V(3), month = V(5) * 10 + V(6), day = V(8) * 10 + V(9);
    int64_t hour = V(11) * 10 + V(12), minute = V(14) * 10 + V(15), second = V(17) * 10 + V(18);
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59
        || second > 59) return 0;
    size_t i = 19;
    int64_t ms = 0;
    if (b[i] == '.') {
        size_t f = ++i;
        while (i < n && D(i)) { if (i - f < 3) ms = ms * 10 + V(i); i++; }
        if (i == f) return 0;
        if (i - f == 1) ms *= 100; else if (i - f == 2) ms *= 10;
    }
    if (n - i == 1) { if ((b[i] | 0x20) != 'z') return 0; }
    else if (n - i == 6) { if (memcmp(b + i, "+00:00", 6) != 0) return 0; }
    else return 0;
#undef D
#undef V
    *out = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60000 + second * 1000 + ms;
    return 1;
}

/* ---------------------------------------------------------------- events */

enum field { F_EVENT_ID, F_TYPE, F_TRACK_ID, F_OCCURRED_AT, F_LISTENER_ID, F_POSITION_MS, F_DURATION_MS, F_CLIENT,
             F_COUNTRY, F_UNKNOWN };
#define REQUIRED_MASK 0xFu

static inline int match_field(const uint8_t *k, size_t n) {
    switch (n) {
    case 4: return load32(k) == 0x65707974u ? F_TYPE : F_UNKNOWN;
    case 6: return load32(k) == 0x65696C63u && load32(k + 2) == 0x746E6569u ? F_CLIENT : F_UNKNOWN;
    case 7: return load32(k) == 0x6E756F63u && load32(k + 3) == 0x7972746Eu ? F_COUNTRY : F_UNKNOWN;
    case 8: {
        uint64_t w = load64(k);
        if (w == 0x64695F746E657665ULL) return F_EVENT_ID;
        if (w == 0x64695F6B63617274ULL) return F_TRACK_ID;
        return F_UNKNOWN;
    }
    case 11: {
        uint64_t h = load64(k);
        uint32_t t = load32(k + 7);
        if (h == 0x646572727563636FULL && t == 0x74615F64u) return F_OCCURRED_AT;
        if (h == 0x72656E657473696CULL && t == 0x64695F72u) return F_LISTENER_ID;
        if (h == 0x6E6F697469736F70ULL && t == 0x736D5F6Eu) return F_POSITION_MS;
        if (h == 0x6E6F697461727564ULL && t == 0x736D5F6Eu) return F_DURATION_MS;
        return F_UNKNOWN;
    }
    default: return F_UNKNOWN;
    }
}

static inline int id_byte_allowed(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

typedef struct {
    uint8_t id[64];
    size_t id_len;
    int64_t track_id;
    int64_t occurred_at;
} event;

typedef struct {
    scanner s;
    unsigned present, invalid;
    int unsupported_type;
    event ev;
} parsing;

static inline void note(parsing *ps, int f, int outcome /* 0 valid, 1 invalid, 2 null */) {
    unsigned bit = 1u << f;
    ps->present &= ~bit;
    ps->invalid &= ~bit;
    if (outcome == 0) ps->present |= bit;
    else if (outcome == 1) ps->present |= bit, ps->invalid |= bit;
    if (f == F_TYPE) ps->unsupported_type = 0;
}

/* Scans a value that should be a string: returns OK and the body in [*b, *e) with
 * *is_string = 1, or skips any other value with *is_string = 0. */
static inline int string_value(parsing *ps, const uint8_t **b, const uint8_t **e, int *esc, int *is_string) {
    if (cur(&ps->s) != '"') { *is_string = 0; return skip_value(&ps->s, 1); }
    *is_string = 1;
    ps->s.p++;
    *b = ps->s.p;
    int r = scan_string(&ps->s, esc);
    *e = ps->s.p - 1;
    return r;
}

/* Scans a value that should be an integer; *ok = 1 with *v, else 0 (value skipped). */
static inline int integer_value(parsing *ps, int64_t *v, int *ok) {
    int c = cur(&ps->s);
    if (c == '-' || (uint8_t)(c - '0') < 10) return scan_number(&ps->s, ok, v);
    *ok = 0;
    return skip_value(&ps->s, 1);
}

static int scan_field(parsing *ps, int f) {
    scanner *s = &ps->s;
    const uint8_t *b, *e;
    int r, esc, is_string, ok;
    int64_t v;
    static uint8_t buf[MAX_EVENT_BYTES];
    if (cur(s) == 'n') {
        if ((r = expect_literal(s, "null", 4))) return r;
        note(ps, f, 2);
        return OK;
    }
    switch (f) {
    case F_EVENT_ID:
        if ((r = string_value(ps, &b, &e, &esc, &is_string))) return r;
        if (is_string && esc) { size_t n = decode_string(b, e, buf); b = buf; e = buf + n; }
        ok = is_string && e - b >= 1 && e - b <= 64;
        for (const uint8_t *c = b; ok && c < e; c++) ok = id_byte_allowed(*c);
        if (ok) { memcpy(ps->ev.id, b, e - b); ps->ev.id_len = e - b; }
        note(ps, f, !ok);
        return OK;
    case F_TYPE:
        if ((r = string_value(ps, &b, &e, &esc, &is_string))) return r;
        note(ps, f, !is_string);
        if (is_string) {
            if (esc) { size_t n = decode_string(b, e, buf); b = buf; e = buf + n; }
            ps->unsupported_type = !(e - b == 4 && load32(b) == 0x79616C70u);
        }
        return OK;
    case F_TRACK_ID:
        if ((r = integer_value(ps, &v, &ok))) return r;
        ok = ok && v >= 1 && v <= MAX_TRACK_ID;
        if (ok) ps->ev.track_id = v;
        note(ps, f, !ok);
        return OK;
    case F_OCCURRED_AT:
        if (cur(s) == '"') {
            if ((r = string_value(ps, &b, &e, &esc, &is_string))) return r;
            if (esc) { size_t n = decode_string(b, e, buf); b = buf; e = buf + n; }
            ok = parse_timestamp(b, e - b, &v);
        } else if ((r = integer_value(ps, &v, &ok))) return r;
        ok = ok && v >= EARLIEST_MS && v < LATEST_MS;
        if (ok) ps->ev.occurred_at = v;
        note(ps, f, !ok);
        return OK;
    case F_LISTENER_ID:
    case F_POSITION_MS:
    case F_DURATION_MS:
        if ((r = integer_value(ps, &v, &ok))) return r;
        note(ps, f, !(ok && (f == F_DURATION_MS ? v > 0 : v >= 0)));
        return OK;
    default: /* client, country */
        if ((r = string_value(ps, &b, &e, &esc, &is_string))) return r;
        size_t n = e - b;
        if (is_string && esc && n > 32) n = decode_string(b, e, buf);
        note(ps, f, !(is_string && n <= 32));
        return OK;
    }
}

/* Validates one line; on OK, *out holds the event. Precedence as in the Swift parser:
 * too_large, empty, first syntax fault, unsupported_type, invalid_field, missing_field. */
static int parse_event(const uint8_t *line, size_t n, event *out) {
    if (n > MAX_EVENT_BYTES) return TOO_LARGE;
    parsing ps = {{line, line + n}, 0, 0, 0, {{0}, 0, 0, 0}};
    scanner *s = &ps.s;
    int r, esc;
    skip_ws(s);
    if (s->p == s->end) return EMPTY;
    if (cur(s) != '{') return fault(s);
    s->p++;
    skip_ws(s);
    if (cur(s) == '}') s->p++;
    else for (;;) {
        if (cur(s) != '"') return fault(s);
        s->p++;
        const uint8_t *k = s->p;
        if ((r = scan_string(s, &esc))) return r;
        size_t klen = s->p - 1 - k;
        int f;
        if (esc) {
            static uint8_t key[MAX_EVENT_BYTES];
            size_t kn = decode_string(k, s->p - 1, key);
            f = kn <= 11 ? match_field(key, kn) : F_UNKNOWN;
        } else {
            f = match_field(k, klen);
        }
        skip_ws(s);
        if (cur(s) != ':') return fault(s);
        s->p++;
        skip_ws(s);
        if ((r = f == F_UNKNOWN ? skip_value(s, 1) : scan_field(&ps, f))) return r;
        skip_ws(s);
        int c = cur(s);
        if (c == ',') { s->p++; skip_ws(s); continue; }
        if (c == '}') { s->p++; break; }
        return fault(s);
    }
    skip_ws(s);
    if (s->p != s->end) return fault(s);
    if (ps.unsupported_type) return UNSUPPORTED_TYPE;
    if (ps.invalid) return INVALID_FIELD;
    if ((ps.present & REQUIRED_MASK) != REQUIRED_MASK) return MISSING_FIELD;
    *out = ps.ev;
    return OK;
}

/* ---------------------------------------------------------------- hash tables */

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static inline uint64_t hash_id(const uint8_t *id, size_t n, int64_t hour) {
    uint64_t h = mix64((uint64_t)hour ^ (n * 0x9E3779B97F4A7C15ULL));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) h = (h ^ load64(id + i)) * 0x9E3779B97F4A7C15ULL, h ^= h >> 29;
    if (i < n) { uint64_t w = 0; memcpy(&w, id + i, n - i); h = (h ^ w) * 0x9E3779B97F4A7C15ULL; }
    return mix64(h);
}

/* The (hour, event_id) set: slots hold the hash and an offset into an arena of keys. */
typedef struct { uint64_t hash; uint64_t offset; } id_slot; /* offset 0 = empty */
typedef struct { id_slot *slots; size_t mask, count; uint8_t *arena; size_t used, cap; } id_set;

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n);
    if (!p) { fprintf(stderr, "c-scanner: out of memory\n"); exit(2); }
    return p;
}

static void id_set_grow(id_set *set) {
    size_t cap = set->mask ? (set->mask + 1) * 2 : 1 << 16;
    id_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) { fprintf(stderr, "c-scanner: out of memory\n"); exit(2); }
    for (size_t i = 0; set->mask && i <= set->mask; i++) {
        if (!set->slots[i].offset) continue;
        size_t j = set->slots[i].hash & (cap - 1);
        while (slots[j].offset) j = (j + 1) & (cap - 1);
        slots[j] = set->slots[i];
    }
    free(set->slots);
    set->slots = slots;
    set->mask = cap - 1;
}

/* Returns 1 if (hour, id) was new. Arena record: hour (8 bytes), length (1), bytes. */
static int id_set_insert(id_set *set, const uint8_t *id, size_t n, int64_t hour) {
    if ((set->count + 1) * 2 > set->mask + 1) id_set_grow(set);
    uint64_t h = hash_id(id, n, hour);
    size_t j = h & set->mask;
    while (set->slots[j].offset) {
        if (set->slots[j].hash == h) {
            const uint8_t *rec = set->arena + set->slots[j].offset;
            int64_t rh;
            memcpy(&rh, rec, 8);
            if (rh == hour && rec[8] == n && memcmp(rec + 9, id, n) == 0) return 0;
        }
        j = (j + 1) & set->mask;
    }
    if (set->used + 9 + n > set->cap) {
        set->cap = set->cap ? set->cap * 2 : 1 << 24;
        set->arena = xrealloc(set->arena, set->cap);
    }
    if (set->used == 0) set->used = 1; /* offset 0 marks an empty slot */
    uint8_t *rec = set->arena + set->used;
    memcpy(rec, &hour, 8);
    rec[8] = (uint8_t)n;
    memcpy(rec + 9, id, n);
    set->slots[j].hash = h;
    set->slots[j].offset = set->used;
    set->used += 9 + n;
    set->count++;
    return 1;
}

/* plays per (track_id, hour): track_id is never 0, so 0 marks an empty slot. */
typedef struct { int64_t track, hour, plays; } count_slot;
typedef struct { count_slot *slots; size_t mask, count; } count_map;

static inline uint64_t hash_cell(int64_t track, int64_t hour) {
    return mix64((uint64_t)track * 0x9E3779B97F4A7C15ULL ^ (uint64_t)hour);
}

static void count_map_grow(count_map *map) {
    size_t cap = map->mask ? (map->mask + 1) * 2 : 1 << 16;
    count_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) { fprintf(stderr, "c-scanner: out of memory\n"); exit(2); }
    for (size_t i = 0; map->mask && i <= map->mask; i++) {
        if (!map->slots[i].track) continue;
        size_t j = hash_cell(map->slots[i].track, map->slots[i].hour) & (cap - 1);
        while (slots[j].track) j = (j + 1) & (cap - 1);
        slots[j] = map->slots[i];
    }
    free(map->slots);
    map->slots = slots;
    map->mask = cap - 1;
}

static void count_map_add(count_map *map, int64_t track, int64_t hour) {
    if ((map->count + 1) * 2 > map->mask + 1) count_map_grow(map);
    size_t j = hash_cell(track, hour) & map->mask;
    while (map->slots[j].track) {
        if (map->slots[j].track == track && map->slots[j].hour == hour) { map->slots[j].plays++; return; }
        j = (j + 1) & map->mask;
    }
    map->slots[j] = (count_slot){track, hour, 1};
    map->count++;
}

/* ---------------------------------------------------------------- main */

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

typedef struct {
    int validate_only, print_reasons;
    uint64_t events, valid, duplicates, rejected, by_reason[REASON_COUNT];
    id_set seen;
    count_map counts;
} totals;

static void process_line(totals *t, const uint8_t *line, size_t n) {
    event ev;
    t->events++;
    int r = parse_event(line, n, &ev);
    if (t->print_reasons) { puts(reason_names[r]); return; }
    if (r) { t->rejected++; t->by_reason[r]++; return; }
    if (t->validate_only) { t->valid++; return; }
    int64_t hour = floor_div(ev.occurred_at, 3600000);
    if (!id_set_insert(&t->seen, ev.id, ev.id_len, hour)) { t->duplicates++; return; }
    t->valid++;
    count_map_add(&t->counts, ev.track_id, hour);
}

/* Reads the file in large blocks; a line longer than the block is still counted (as
 * too_large) by skipping to its end. */
static int process_file(totals *t, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    size_t cap = 16u << 20, len = 0;
    uint8_t *buf = xrealloc(NULL, cap);
    int skipping = 0; /* inside an overlong line already counted */
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        int eof = got == 0;
        uint8_t *p = buf, *end = buf + len;
        for (;;) {
            uint8_t *nl = memchr(p, '\n', end - p);
            if (!nl) break;
            if (skipping) skipping = 0;
            else process_line(t, p, nl - p);
            p = nl + 1;
        }
        len = end - p;
        if (eof) {
            if (len && !skipping) process_line(t, p, len);
            break;
        }
        if (len > MAX_EVENT_BYTES && !skipping) { /* too long to matter: count it, drop its bytes */
            process_line(t, p, len);
            skipping = 1;
        }
        if (skipping) len = 0;
        else memmove(buf, p, len);
    }
    if (ferror(f)) { perror(path); fclose(f); free(buf); return 1; }
    fclose(f);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    totals t;
    memset(&t, 0, sizeof t);
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1] == '-'; first++) {
        if (strcmp(argv[first], "--validate-only") == 0) t.validate_only = 1;
        else if (strcmp(argv[first], "--reasons") == 0) t.print_reasons = 1;
        else { fprintf(stderr, "c-scanner: unknown option %s\n", argv[first]); return 2; }
    }
    if (argc <= first) { fprintf(stderr, "usage: %s [--validate-only] [--reasons] FILE.ndjson...\n", argv[0]); return 2; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = first; i < argc; i++) if (process_file(&t, argv[i])) return 1;
    uint64_t checksum = 0;
    for (size_t i = 0; t.counts.mask && i <= t.counts.mask; i++) {
        count_slot *c = &t.counts.slots[i];
        if (c->track) checksum += ((uint64_t)c->track * 31 + (uint64_t)c->hour) * (uint64_t)c->plays;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (t.print_reasons) return 0;
    double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("events=%llu valid=%llu duplicates=%llu rejected=%llu keys=%zu seconds=%.3f events_per_sec=%.0f checksum=%llu\n",
           (unsigned long long)t.events, (unsigned long long)t.valid, (unsigned long long)t.duplicates,
           (unsigned long long)t.rejected, t.counts.count, seconds, seconds > 0 ? t.events / seconds : 0.0,
           (unsigned long long)checksum);
    printf("rejected_by_reason");
    for (int r = 1; r < REASON_COUNT; r++) printf(" %s=%llu", reason_names[r], (unsigned long long)t.by_reason[r]);
    printf("\n");
    return 0;
}
