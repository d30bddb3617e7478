// The EventLogs module; its contents arrive with the foundation work.
