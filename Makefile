# axe4j: two commands matter — `make demo` and `make test` (see README.md).
MVN ?= mvn
MVNFLAGS ?= -B --no-transfer-progress
SHELL := /bin/bash

.PHONY: demo test build python bench-layout clean

## Build the jars (no tests).
build:
	$(MVN) $(MVNFLAGS) -q -DskipTests package

## Python virtual environment with the pinned TVM stack (idempotent; seconds when up to date).
python:
	bash ci/setup-python.sh

## Set up everything from a fresh clone, then run the paper's examples.
demo: build
	bin/axe demo

## Every test: Java (JUnit) and Python.
test:
	bash ci/test.sh

## JMH benchmark of the layout algebra on the paper's layouts.
bench-layout: build
	bash ci/bench-layout.sh

clean:
	$(MVN) $(MVNFLAGS) -q clean
