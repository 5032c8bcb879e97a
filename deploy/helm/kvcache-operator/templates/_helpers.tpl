{{/* The text of a manifest of deploy/ (files/ links to them), one YAML document. */}}
{{- define "kvcache.file" -}}
{{- $.root.Files.Get (printf "files/%s" $.name) -}}
{{- end -}}

{{/* Every document of a multi-document file. */}}
{{- define "kvcache.documents" -}}
{{- $docs := list -}}
{{- range (regexSplit "(?m)^---\\s*$" ($.root.Files.Get (printf "files/%s" $.name)) -1) -}}
{{- $doc := fromYaml . -}}
{{- if $doc -}}{{- $docs = append $docs $doc -}}{{- end -}}
{{- end -}}
{{- toYaml (dict "items" $docs) -}}
{{- end -}}
