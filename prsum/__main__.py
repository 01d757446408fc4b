from prsum.cli import main

main()
