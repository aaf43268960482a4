from patchops.cli import main

main()
