// The counterpoint executable; its subcommands arrive with the foundation work.
print("counterpoint")
