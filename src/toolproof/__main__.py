from toolproof.cli import main

main()
