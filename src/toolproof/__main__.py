from toolproof.cli import program

program()
