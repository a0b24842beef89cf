import '../../../../outside.jsonnet'
