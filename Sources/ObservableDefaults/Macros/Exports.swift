@_exported import Observation
