from patchops.cli.app import main

main()
