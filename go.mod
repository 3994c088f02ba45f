module github.com/perfexp/perfexp

go 1.26.0
