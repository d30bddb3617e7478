# Sourced by the bench scripts. `process_memory PID` prints the process's peak resident memory
# (VmHWM) and what it holds now: file-backed pages (a memory-mapped store's pages, counted once
# per mapping, i.e. per reader thread, and shared with the page cache) and anonymous memory (the
# process's own).
process_memory() {
  awk '/^VmHWM:/ { h = $2 } /^RssFile:/ { f = $2 } /^RssAnon:/ { a = $2 }
    END { printf "%.0f MiB (now %.0f MiB file-backed, %.0f MiB anonymous)", h / 1024, f / 1024, a / 1024 }' "/proc/$1/status"
}
